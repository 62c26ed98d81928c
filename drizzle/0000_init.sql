CREATE TABLE `episodes` (
	`id` text PRIMARY KEY NOT NULL,
	`env_id` text NOT NULL,
	`env_version` text NOT NULL,
	`split` text NOT NULL,
	`task_index` integer NOT NULL,
	`seed` integer NOT NULL,
	`args` text NOT NULL,
	`metadata` text NOT NULL,
	`state` text,
	`messages` text NOT NULL,
	`prompt_length` integer NOT NULL,
	`replies` text NOT NULL,
	`turn` integer NOT NULL,
	`status` text NOT NULL,
	`stop_reason` text,
	`truncated` integer NOT NULL,
	`error` text,
	`score` text,
	`scored_at` integer,
	`idempotency_key` text,
	`request_hash` text,
	`ttl_seconds` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `episodes_idempotency_key_unique` ON `episodes` (`idempotency_key`);--> statement-breakpoint
CREATE INDEX `episodes_expires_at` ON `episodes` (`expires_at`);--> statement-breakpoint
CREATE INDEX `episodes_env_status` ON `episodes` (`env_id`,`status`);