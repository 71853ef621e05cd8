CREATE TABLE `mirror_quarantine` (
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`id` integer NOT NULL,
	`statements` integer NOT NULL,
	`error` text NOT NULL,
	`at` text NOT NULL,
	PRIMARY KEY(`tenant`, `session_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `mirror_quarantine_at` ON `mirror_quarantine` (`at`);