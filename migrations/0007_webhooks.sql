CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event_key` text NOT NULL,
	`event_type` text NOT NULL,
	`run_id` text NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`run_status` text NOT NULL,
	`event_at` text NOT NULL,
	`attempts` integer NOT NULL,
	`round_start` integer NOT NULL,
	`status` text NOT NULL,
	`last_status_code` integer,
	`next_attempt_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`webhook_id`,`event_key`,`event_type`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_list` ON `webhook_deliveries` (`tenant`,`webhook_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`tenant` text NOT NULL,
	`id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`agent_id` text,
	`ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `id`)
);
--> statement-breakpoint
CREATE INDEX `webhooks_list` ON `webhooks` (`tenant`,`created_at`,`id`);