CREATE TABLE `run_inputs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant` text NOT NULL,
	`session_id` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `run_inputs_by_session` ON `run_inputs` (`tenant`,`session_id`);