// Package discovery is service discovery on ZooKeeper, wire-compatible with Apache
// Curator's curator-x-discovery (and so with Spring Cloud Zookeeper and Dubbo 3,
// which write the same layout): a Java client discovers a Go instance and a Go
// client a Java one.
//
// An instance of service name is the node basePath/<name>/<id>, holding Curator's
// ServiceInstance JSON: name, id, address, port, sslPort, payload,
// registrationTimeUTC (milliseconds), serviceType, uriSpec (its parsed parts) and,
// only for a disabled instance, "enabled":false. Unset fields are null, as Curator
// writes them; the payload is kept as raw JSON, Java's "@class" included. Reading is
// tolerant of what every Curator version writes: unknown fields are ignored, a
// missing serviceType is DYNAMIC, a missing enabled is true.
//
// Register keeps an instance's node in place with a nodes.PersistentNode: after a
// session loss it is back under the new session as soon as the client reconnects,
// with the latest Update's data, and a reconnect within the session sends nothing
// (Curator deletes and re-creates the node on every reconnect, so its watchers see
// the instance leave and come back). An id held by another live session is refused
// with ErrIDTaken rather than deleted.
//
// A Provider follows one service through a cache.Cache of basePath/<name> at
// Depth(1), as Curator's ServiceCache follows it through a CuratorCache: a change
// costs one notification and one read, and after a session loss the provider reads
// everything again and reports only the differences. Listeners hear which instance
// was Added, Updated or Removed, with the old and new instance (Curator's
// ServiceCacheListener is told only that something changed). Pick chooses from
// memory, by RoundRobin (the default), Random or Sticky, skipping disabled
// instances, those WithFilter refuses and those NoteError marked down (DownAfter).
//
// A node whose data is not an instance is left out of a provider's list and
// reported once per version, as an Error event and a warning in the log; queries
// skip it with a warning. It never stops the others from being read.
package discovery
