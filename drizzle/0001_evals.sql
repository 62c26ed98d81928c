CREATE TABLE `eval_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`env_id` text NOT NULL,
	`env_version` text NOT NULL,
	`model` text NOT NULL,
	`status` text NOT NULL,
	`request` text NOT NULL,
	`split` text NOT NULL,
	`num_examples` integer NOT NULL,
	`total_rollouts` integer NOT NULL,
	`summary` text,
	`error` text,
	`cancel_requested` integer NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`run_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `eval_jobs_status` ON `eval_jobs` (`status`,`lease_expires_at`);--> statement-breakpoint
CREATE INDEX `eval_jobs_created` ON `eval_jobs` (`created_at`);--> statement-breakpoint
CREATE TABLE `eval_rollouts` (
	`job_id` text NOT NULL,
	`example_id` integer NOT NULL,
	`rollout_index` integer NOT NULL,
	`reward` real NOT NULL,
	`error_code` text,
	`row` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`job_id`, `example_id`, `rollout_index`)
);
