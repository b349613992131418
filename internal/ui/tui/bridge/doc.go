// Package bridge carries the team's events and streamed text to the chat
// screen without ever blocking an agent:
//   - Bridge is the team's OnEvent and OnDelta subscriber (and the model
//     client's OnRetry): what it takes is queued under a lock, activity
//     coalesced to the latest per agent, nothing else dropped;
//   - Run hands the queue to the program as one Batch per debounce
//     interval, in the order it happened, streamed text of one agent
//     gathered into a Chunk.
package bridge
