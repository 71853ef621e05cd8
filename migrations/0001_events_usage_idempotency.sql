CREATE TABLE `events` (
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`seq` integer NOT NULL,
	`run_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `session_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `events_by_run` ON `events` (`tenant`,`run_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_by_age` ON `events` (`created_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`tenant` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`result` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_by_age` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `usage_daily` (
	`tenant` text NOT NULL,
	`date` text NOT NULL,
	`agent_id` text NOT NULL,
	`runs` integer NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cache_read_tokens` integer NOT NULL,
	`cache_write_tokens` integer NOT NULL,
	`cost_usd` real,
	PRIMARY KEY(`tenant`, `date`, `agent_id`)
);
--> statement-breakpoint
CREATE INDEX `messages_by_run` ON `messages` (`tenant`,`run_id`,`idx`);