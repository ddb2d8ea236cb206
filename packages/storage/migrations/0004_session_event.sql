CREATE TABLE `permission_pending` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`root_session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`data` text NOT NULL,
	`reply` text
);
--> statement-breakpoint
CREATE INDEX `permission_pending_session_id_idx` ON `permission_pending` (`session_id`);--> statement-breakpoint
CREATE INDEX `permission_pending_root_session_id_idx` ON `permission_pending` (`root_session_id`);--> statement-breakpoint
CREATE TABLE `session_event` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`root_session_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`time` integer NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `session_event_session_id_seq_idx` ON `session_event` (`session_id`,`seq`);--> statement-breakpoint
CREATE INDEX `session_event_root_session_id_id_idx` ON `session_event` (`root_session_id`,`id`);