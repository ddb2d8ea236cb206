CREATE TABLE `permission_grant` (
	`id` text PRIMARY KEY NOT NULL,
	`project` text NOT NULL,
	`permission` text NOT NULL,
	`pattern` text NOT NULL,
	`time_created` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `permission_grant_project_permission_pattern_idx` ON `permission_grant` (`project`,`permission`,`pattern`);--> statement-breakpoint
CREATE INDEX `permission_grant_project_idx` ON `permission_grant` (`project`);