CREATE TABLE "message" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"time_created" bigint NOT NULL,
	"data" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "part" (
	"id" text PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"session_id" text NOT NULL,
	"data" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "permission_grant" (
	"id" text PRIMARY KEY NOT NULL,
	"project" text NOT NULL,
	"permission" text NOT NULL,
	"pattern" text NOT NULL,
	"time_created" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "permission_pending" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"root_session_id" text NOT NULL,
	"time_created" bigint NOT NULL,
	"data" jsonb NOT NULL,
	"reply" jsonb
);
--> statement-breakpoint
CREATE TABLE "session" (
	"id" text PRIMARY KEY NOT NULL,
	"directory" text NOT NULL,
	"parent_id" text,
	"title" text NOT NULL,
	"time_created" bigint NOT NULL,
	"time_updated" bigint NOT NULL,
	"data" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_event" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"root_session_id" text NOT NULL,
	"seq" integer NOT NULL,
	"type" text NOT NULL,
	"time" bigint NOT NULL,
	"data" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_run" (
	"session_id" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"host" text NOT NULL,
	"pid" integer NOT NULL,
	"epoch" integer NOT NULL,
	"time_started" bigint NOT NULL,
	"time_expires" bigint NOT NULL,
	"queued" integer NOT NULL,
	"abort" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
ALTER TABLE "message" ADD CONSTRAINT "message_session_id_session_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."session"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "part" ADD CONSTRAINT "part_message_id_message_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."message"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_run" ADD CONSTRAINT "session_run_session_id_session_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."session"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "message_session_id_idx" ON "message" USING btree ("session_id","id");--> statement-breakpoint
CREATE INDEX "message_summary_idx" ON "message" USING btree ("session_id","id") WHERE (data->>'summary') IS NOT NULL;--> statement-breakpoint
CREATE INDEX "part_message_id_idx" ON "part" USING btree ("message_id","id");--> statement-breakpoint
CREATE INDEX "part_session_id_idx" ON "part" USING btree ("session_id");--> statement-breakpoint
CREATE UNIQUE INDEX "permission_grant_project_permission_pattern_idx" ON "permission_grant" USING btree ("project","permission","pattern");--> statement-breakpoint
CREATE INDEX "permission_grant_project_idx" ON "permission_grant" USING btree ("project");--> statement-breakpoint
CREATE INDEX "permission_pending_session_id_idx" ON "permission_pending" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "permission_pending_root_session_id_idx" ON "permission_pending" USING btree ("root_session_id");--> statement-breakpoint
CREATE INDEX "session_time_updated_idx" ON "session" USING btree ("time_updated");--> statement-breakpoint
CREATE INDEX "session_directory_time_updated_idx" ON "session" USING btree ("directory","time_updated");--> statement-breakpoint
CREATE INDEX "session_parent_id_idx" ON "session" USING btree ("parent_id");--> statement-breakpoint
CREATE UNIQUE INDEX "session_event_session_id_seq_idx" ON "session_event" USING btree ("session_id","seq");--> statement-breakpoint
CREATE INDEX "session_event_root_session_id_id_idx" ON "session_event" USING btree ("root_session_id","id");--> statement-breakpoint
CREATE INDEX "session_event_time_idx" ON "session_event" USING btree ("time");