-- A lease of an earlier reins (pid and heartbeat, no epoch) cannot be carried over: the table starts empty.
DROP TABLE `session_run`;--> statement-breakpoint
CREATE TABLE `session_run` (
	`session_id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`epoch` integer NOT NULL,
	`time_started` integer NOT NULL,
	`time_expires` integer NOT NULL,
	`queued` integer NOT NULL,
	`abort` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON UPDATE no action ON DELETE cascade
);
