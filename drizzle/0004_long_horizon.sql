CREATE TABLE `episode_lineage` (
	`episode_id` text NOT NULL,
	`ancestor_id` text NOT NULL,
	`to_turn` integer NOT NULL,
	PRIMARY KEY(`episode_id`, `ancestor_id`)
);
--> statement-breakpoint
CREATE INDEX `episode_lineage_ancestor` ON `episode_lineage` (`ancestor_id`,`to_turn`);--> statement-breakpoint
CREATE TABLE `episode_turns` (
	`episode_id` text NOT NULL,
	`turn` integer NOT NULL,
	`message` text,
	`reply_messages` text,
	`reply` text,
	`state` text,
	`done` integer NOT NULL,
	`sampled` text,
	`template_hash` text,
	`stop_tallies` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`episode_id`, `turn`)
);
--> statement-breakpoint
ALTER TABLE `episodes` ADD `parent_id` text;--> statement-breakpoint
ALTER TABLE `episodes` ADD `fork_turn` integer;--> statement-breakpoint
ALTER TABLE `episodes` ADD `template_hash` text;--> statement-breakpoint
ALTER TABLE `episodes` ADD `stop_tallies` text;--> statement-breakpoint
ALTER TABLE `episodes` ADD `template_changes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Hand-written (not generated): carry every episode's transcript into episode_turns before
-- the columns that held it go. Turn 0 is the opening messages; turn k >= 1 is the k-th stored
-- reply body (replies[k-1]) with its messages, and the assistant message found at
-- prompt_length + sum over earlier turns of (1 + their reply's message count). Only the last
-- turn's state is known (the head held no others); tombstones (expired) hold nothing. A step's
-- reply_messages stay NULL: they are read from its reply body, as for turns written after this.
INSERT INTO `episode_turns` (`episode_id`, `turn`, `message`, `reply_messages`, `reply`, `state`, `done`, `sampled`, `template_hash`, `created_at`)
SELECT `id`, 0, NULL,
  (SELECT json_group_array(json(m.value)) FROM json_each(`episodes`.`messages`) AS m WHERE m.key < `episodes`.`prompt_length`),
  NULL,
  CASE WHEN `turn` = 0 THEN `state` END,
  CASE WHEN `turn` = 0 AND `stop_reason` IS NOT NULL AND `stop_reason` <> 'scored' THEN 1 ELSE 0 END,
  NULL, NULL, `created_at`
FROM `episodes` WHERE `status` <> 'expired';--> statement-breakpoint
INSERT INTO `episode_turns` (`episode_id`, `turn`, `message`, `reply_messages`, `reply`, `state`, `done`, `sampled`, `template_hash`, `created_at`)
SELECT `id`, `k`, json_extract(`messages`, '$[' || `pos` || ']'), NULL, `reply`,
  CASE WHEN `k` = `turn` THEN `state` END,
  CASE WHEN `k` = `turn` AND `stop_reason` IS NOT NULL AND `stop_reason` <> 'scored' THEN 1 ELSE 0 END,
  NULL, NULL, `updated_at`
FROM (
  SELECT e.`id`, e.`messages`, e.`state`, e.`turn`, e.`stop_reason`, e.`updated_at`, r.key + 1 AS `k`, r.value AS `reply`,
    e.`prompt_length` + coalesce(sum(1 + json_array_length(r.value, '$.messages')) OVER (PARTITION BY e.`id` ORDER BY r.key ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS `pos`
  FROM `episodes` AS e, json_each(e.`replies`) AS r
  WHERE e.`status` <> 'expired'
);--> statement-breakpoint
ALTER TABLE `episodes` DROP COLUMN `messages`;--> statement-breakpoint
ALTER TABLE `episodes` DROP COLUMN `replies`;