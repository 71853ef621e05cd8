CREATE TABLE `credentials` (
	`tenant` text NOT NULL,
	`id` text NOT NULL,
	`provider` text NOT NULL,
	`base_url` text,
	`header_names` text NOT NULL,
	`ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant`, `id`)
);
--> statement-breakpoint
CREATE INDEX `credentials_list` ON `credentials` (`tenant`,`created_at`,`id`);