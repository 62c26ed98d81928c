DROP INDEX `episodes_expires_at`;--> statement-breakpoint
ALTER TABLE `episodes` ADD `tenant` text DEFAULT 'public' NOT NULL;--> statement-breakpoint
ALTER TABLE `episodes` ADD `stored_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `episodes_expiry_usage` ON `episodes` (`expires_at`,`tenant`,`status`,`stored_bytes`);--> statement-breakpoint
ALTER TABLE `eval_jobs` ADD `tenant` text DEFAULT 'public' NOT NULL;--> statement-breakpoint
CREATE INDEX `eval_jobs_tenant` ON `eval_jobs` (`tenant`,`status`,`created_at`);