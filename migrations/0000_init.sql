CREATE TABLE `agents` (
	`tenant` text NOT NULL,
	`id` text NOT NULL,
	`version` integer NOT NULL,
	`definition` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	PRIMARY KEY(`tenant`, `id`)
);
--> statement-breakpoint
CREATE INDEX `agents_list` ON `agents` (`tenant`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_tenant_name` ON `api_keys` (`tenant`,`name`);--> statement-breakpoint
CREATE TABLE `messages` (
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`idx` integer NOT NULL,
	`run_id` text NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `session_id`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`agent_version` integer NOT NULL,
	`status` text NOT NULL,
	`body` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_by_agent` ON `runs` (`tenant`,`agent_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_by_session` ON `runs` (`tenant`,`session_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`tenant` text NOT NULL,
	`id` text NOT NULL,
	`agent_id` text NOT NULL,
	`last_seq` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `id`)
);
--> statement-breakpoint
CREATE INDEX `sessions_list` ON `sessions` (`tenant`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `sessions_by_agent` ON `sessions` (`tenant`,`agent_id`,`created_at`,`id`);