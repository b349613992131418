package natsstore

// MaxPayload is the largest message `agentteam serve` takes (NATS's
// max_payload, 1 MiB by default): the files store's largest inbox line
// (its 256 KiB of content escaped at worst, 2 MiB) and its headers fit, so
// both stores take the same messages.
const MaxPayload = 4 << 20

// headerRoom is what a message's headers (its Nats-Msg-Id, an expected
// last sequence) may take of the server's max_payload (encodeAppend).
const headerRoom = 1024
