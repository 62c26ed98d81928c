CREATE TABLE "episode_lineage" (
	"episode_id" text NOT NULL,
	"ancestor_id" text NOT NULL,
	"to_turn" integer NOT NULL,
	CONSTRAINT "episode_lineage_episode_id_ancestor_id_pk" PRIMARY KEY("episode_id","ancestor_id")
);
--> statement-breakpoint
CREATE TABLE "episode_turns" (
	"episode_id" text NOT NULL,
	"turn" integer NOT NULL,
	"message" text,
	"reply_messages" text,
	"reply" text,
	"state" text,
	"done" boolean NOT NULL,
	"sampled" text,
	"template_hash" text,
	"stop_tallies" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "episode_turns_episode_id_turn_pk" PRIMARY KEY("episode_id","turn")
);
--> statement-breakpoint
CREATE TABLE "episodes" (
	"id" text PRIMARY KEY NOT NULL,
	"env_id" text NOT NULL,
	"env_version" text NOT NULL,
	"env_hash" text,
	"split" text NOT NULL,
	"task_index" bigint NOT NULL,
	"seed" bigint NOT NULL,
	"args" text NOT NULL,
	"metadata" text NOT NULL,
	"state" text,
	"prompt_length" integer NOT NULL,
	"turn" integer NOT NULL,
	"status" text NOT NULL,
	"stop_reason" text,
	"truncated" boolean NOT NULL,
	"error" text,
	"score" text,
	"scored_at" bigint,
	"idempotency_key" text,
	"request_hash" text,
	"ttl_seconds" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"tenant" text DEFAULT 'public' NOT NULL,
	"stored_bytes" bigint DEFAULT 0 NOT NULL,
	"parent_id" text,
	"fork_turn" integer,
	"template_hash" text,
	"stop_tallies" text,
	"template_changes" text DEFAULT '[]' NOT NULL,
	CONSTRAINT "episodes_idempotency_key_unique" UNIQUE("idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "eval_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"env_id" text NOT NULL,
	"env_version" text NOT NULL,
	"model" text NOT NULL,
	"status" text NOT NULL,
	"request" text NOT NULL,
	"split" text NOT NULL,
	"num_examples" integer NOT NULL,
	"total_rollouts" integer NOT NULL,
	"summary" text,
	"error" text,
	"cancel_requested" boolean NOT NULL,
	"lease_owner" text,
	"lease_expires_at" bigint,
	"run_ms" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"started_at" bigint,
	"finished_at" bigint,
	"tenant" text DEFAULT 'public' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_rollouts" (
	"job_id" text NOT NULL,
	"example_id" integer NOT NULL,
	"rollout_index" integer NOT NULL,
	"reward" double precision NOT NULL,
	"error_code" text,
	"row" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "eval_rollouts_job_id_example_id_rollout_index_pk" PRIMARY KEY("job_id","example_id","rollout_index")
);
--> statement-breakpoint
CREATE INDEX "episode_lineage_ancestor" ON "episode_lineage" USING btree ("ancestor_id","to_turn");--> statement-breakpoint
CREATE INDEX "episodes_expiry_usage" ON "episodes" USING btree ("expires_at","tenant","status","stored_bytes");--> statement-breakpoint
CREATE INDEX "episodes_env_status" ON "episodes" USING btree ("env_id","status");--> statement-breakpoint
CREATE INDEX "eval_jobs_status" ON "eval_jobs" USING btree ("status","lease_expires_at");--> statement-breakpoint
CREATE INDEX "eval_jobs_created" ON "eval_jobs" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "eval_jobs_tenant" ON "eval_jobs" USING btree ("tenant","status","created_at");