DROP INDEX `events_by_run`;--> statement-breakpoint
DROP INDEX `messages_by_run`;