CREATE TABLE `deleted_responses` (
	`tenant` text NOT NULL,
	`run_id` text NOT NULL,
	`session_id` text NOT NULL,
	`deleted_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `run_id`)
);
