// Package framework is zkrecipes' ZooKeeper client: Apache Curator's CuratorFramework
// for Go. A Client is one session that every recipe trusts, so it has to be right
// under faults:
//
//   - Connection states are Curator's. The first session is Connected; a dropped
//     connection is Suspended, and Reconnected when the same session is back; an
//     expired session is Lost, then Reconnected in a new session. go-zookeeper has no
//     client-side timer, so the client decides Lost itself when it stays Suspended for
//     a whole session timeout (counted from the last byte a server sent), and then
//     gives that session up for a new one, so that its ephemeral nodes die with it on
//     the server instead of coming back to a client that no longer trusts them.
//     Listeners hear every change, in order, on one goroutine of the client's.
//   - An ErrorPolicy says which states lose locks and leadership: Suspended and Lost
//     (StandardErrorPolicy, the default) or only Lost (SessionErrorPolicy).
//   - Operations retry connection errors, and only those, as the RetryPolicy says,
//     and stop when their context ends or the client closes.
//   - An operation waits for a connection at most the connection timeout
//     (WithConnectionTimeout, 15 s by default) per attempt. Until the client's
//     first session (Connected), that wait is not retried: a wrong address or an
//     ensemble that is down fails the operation within one connection timeout
//     (WithRetryBeforeFirstConnection retries it as the policy says, as Curator
//     does, for up to (retries + 1) connection timeouts plus the policy's pauses).
//     Once the client has had a session, a Suspended client's operations wait out
//     the policy's retries, each up to a connection timeout. However the wait for a
//     connection ends (the context's deadline or cancellation, the timeout, the
//     retries spent), its error is a *ConnectError that says how long the operation
//     waited and why the last attempt to reach a server failed, for example
//     "dial tcp 127.0.0.1:1: connect: connection refused". WaitConnected waits as an
//     operation does before the first session (one connection timeout, or as long
//     as ctx allows WithRetryBeforeFirstConnection), and as long as ctx allows after
//     it.
//   - A Create (or Multi) whose context ends while its request is in flight waits
//     for the answer and deletes the node it made before it returns, up to 5 s
//     without a server; past that the delete goes on in the background.
//   - The client logs through WithLogger's logger, and is silent without one, but
//     for one warning: the first failed attempt to reach a server after the client
//     starts or loses its server is logged at Warn, once until a server answers,
//     however many attempts fail; without WithLogger it goes to slog.Default().
//   - A namespace puts every path under one node; an ACL provider sets the ACL of
//     every node created; credentials are sent on every connection and new session.
//   - WithTLS connects to the servers' secure client ports (ZooKeeper's
//     secureClientPort, served by its Netty connection factory). The certificate is
//     checked against the host as written in the server list unless the tls.Config
//     names a ServerName; the handshake is bounded by the connection timeout; TLS
//     runs over the connections a WithDialer dialer makes. A client that cannot
//     connect keeps trying, and WaitConnected's error says why the last attempt failed
//     ("x509: certificate signed by unknown authority", a plaintext client hung up on
//     by a TLS port, a TLS client on a plaintext port), as does the error of an
//     operation that found no connection in time.
//   - WithSASL logs in with SASL, DIGEST-MD5 or Kerberos (GSSAPI), on every
//     connection before anything else is written on it (internal/wire's login, on
//     internal/sasl's mechanisms), as a server that requires it expects; a refused
//     login is retried and named by WaitConnected's error (ErrSASLRefused,
//     ErrSASLNotOffered, the KDC's error).
//   - ACLs: every node the client creates gets the provider's ACL for its server
//     path (namespace included), the namespace node and the parents made by
//     CreatingParents and CreatingParentContainers among them, so a recipe's whole
//     tree is as private as its provider says. A request an ACL refuses fails at
//     once, never retried, with an error that wraps ErrNoAuth and names the path and
//     the schemes of the client's credentials. The credentials themselves are never
//     logged, never put in an error, and not shown when the Client is printed.
//   - Missing parents are made, as in Curator, by one of two create options:
//     CreatingParents makes ordinary persistent nodes, which stay when emptied (for
//     the user's own tree); CreatingParentContainers makes containers, which the
//     server deletes once their last child goes (what the recipes use for their
//     paths, so that they leave nothing behind).
//   - Protected creates use Curator's _c_<uuid>- names: a create whose reply was lost
//     is found again, and accepted only if the current session owns it; one that
//     failed for good is found and deleted in the background. Guaranteed deletes go on
//     in the background until they succeed.
//   - Servers are names, resolved each time one is dialled (WithResolver), so a member
//     that comes back at a new address is found there; WithEnsembleTracking follows
//     the ensemble's own configuration (/zookeeper/config), and Config and Reconfig
//     read and change it (docs/servers-that-move.md).
//   - GetACL, SetACL, DeleteAll, Create's OrSetData and WithNodeACL, and Namespaced
//     views sharing the session are Curator's raw calls (docs/raw-operations.md).
//   - Multi runs a transaction (CreateOp, DeleteOp, SetOp, CheckOp): all applied or
//     none, with a *MultiError naming the operation the server refused. Sync makes
//     the connected server catch up with the leader before the next read.
//   - Metrics and traces go through OpenTelemetry's API, to the providers given with
//     WithMeterProvider and WithTracerProvider, so that every recipe on the client
//     reports too. The client counts the connection states it enters
//     (zkrecipes.client.state_changes, by state), the sessions it loses
//     (zkrecipes.client.sessions_lost, by reason: expired or timeout) and the retries
//     of its operations (zkrecipes.client.retries, by operation), and times every
//     operation, retries included (zkrecipes.client.request.duration, by operation
//     and outcome; its count is the number of operations). Attributes take a few
//     fixed values each, never a path or a session id. Without providers nothing is
//     measured and nothing is allocated for it. A program using the library builds
//     only the API, never the SDK, which the module requires for its own tests.
//
// Recipes (mutex, rwlock, semaphore, election) build on it; Conn gives raw access to
// the go-zookeeper connection for anything else.
//
// # The contract every package of the module keeps
//
//   - Every call that can block takes a context.Context first, and says what its
//     end does.
//   - A recipe is made with New(client, path, opts...) (or its package's named
//     constructor), returning (*T, error). Invalid input, a nil client, a bad path,
//     a nil Option or an Option's bad value, is an error there, wrapping the
//     package's ErrInvalid; nothing is sent to ZooKeeper until the first blocking
//     call. Every constructor's Option is a func(*options) error, applied in order
//     (a request's options, CreateOption and DeleteOption, set flags that the request
//     checks together).
//   - A type that holds state on the server, or follows it, is closed with
//     Close(ctx context.Context) error. ctx bounds what Close still waits for (a
//     delete, reads under way); what it cannot finish in time goes on in the
//     background, and its error says so. A second Close returns nil, and Close may be
//     called from the type's own listeners. The Client is the exception: Close()
//     error, since it ends everything under it at once.
//   - Errors are package variables named by area ("mutex: not held"), wrapped with
//     %w, checked with errors.Is; no call panics on bad input.
//   - go-zookeeper is this package's business: the others use the names it gives
//     (Stat, Event, ACL, the errors and permissions), which are go-zookeeper's own
//     types and values.
//
// internal/apicheck holds the exported API to its record in api/ and checks the
// Close and Option shapes above on every package.
package framework
