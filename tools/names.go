package tools

// Tool names, as the model sees them.
const (
	SpawnTeammateName = "spawn_teammate"
	ListTeammatesName = "list_teammates"
	SendMessageName   = "send_message"
	BroadcastName     = "broadcast"
	ReadInboxName     = "read_inbox"
	BashName          = "bash"
	ReadFileName      = "read_file"
	WriteFileName     = "write_file"
	EditFileName      = "edit_file"
	TaskCreateName    = "task_create"
	TaskListName      = "task_list"
	TaskClaimName     = "task_claim"
	TaskUpdateName    = "task_update"

	ShutdownTeammateName = "shutdown_teammate"
	RespondShutdownName  = "respond_shutdown"
	SubmitPlanName       = "submit_plan"
	ReviewPlanName       = "review_plan"
	ReviewPermissionName = "review_permission"
	HandoffName          = "handoff"
	MergeTeammateName    = "merge_teammate"
)
