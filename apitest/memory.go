package apitest

// memoryHost is the host of a server on an in-memory Network (Options.InMemory,
// Options.Network): a name that resolves nowhere, since only the network's own dialer
// reaches it. The TLS certificate names it too.
const memoryHost = "apitest.invalid"
