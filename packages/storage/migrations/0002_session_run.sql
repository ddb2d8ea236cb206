CREATE TABLE `session_run` (
	`session_id` text PRIMARY KEY NOT NULL,
	`pid` integer NOT NULL,
	`host` text NOT NULL,
	`time_started` integer NOT NULL,
	`time_heartbeat` integer NOT NULL,
	`queued` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_summary_idx` ON `message` (`session_id`,`id`) WHERE json_extract(data, '$.summary') IS NOT NULL;