CREATE TABLE `compactions` (
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`id` text NOT NULL,
	`run_id` text NOT NULL,
	`from_idx` integer NOT NULL,
	`to_idx` integer NOT NULL,
	`summary` text NOT NULL,
	`tokens_before` integer NOT NULL,
	`tokens_after` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `session_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `runs_by_time` ON `runs` (`created_at`);--> statement-breakpoint
CREATE INDEX `runs_by_status` ON `runs` (`status`,`updated_at`);