// Package sasl is the client's side of ZooKeeper's SASL logins, DIGEST-MD5 and
// GSSAPI (Kerberos V5), apart from any connection: the mechanisms, the records of
// ZooKeeper's sasl request (opcode OpSASL) and reply, and Exchange, which runs a
// mechanism over a function that carries one token to the server and brings back its
// answer. A connection runs the exchange first, right after its session is
// established and before any other request; a server that requires SASL
// (sessionRequireClientSASLAuth, or enforce.auth.schemes=sasl) answers every other
// request of a session that has not logged in with error -124 and closes the
// connection. It answers a failed login the same way, so ErrRefused cannot say
// whether the password, the principal or the mechanism was wrong: the server's log
// does.
//
// DIGEST-MD5 (RFC 2831) is as ZooKeeper's server runs it through Java's SASL: realm
// DigestRealm, digest-uri DigestURI, algorithm md5-sess, quality of protection auth
// (no security layer). The server speaks first; the client checks its proof
// (rspauth) and refuses a nonce that an earlier exchange of the same credentials had.
// ZooKeeper 3.9's servers refuse it in their default FIPS mode (zookeeper.fips-mode).
//
// GSSAPI (RFC 4752) sends an AP-REQ asking for mutual authentication, checks the
// server's AP-REP, then answers the server's offer of security layers, wrapped in an
// RFC 4121 wrap token whose checksum it checks, with no security layer: the one
// ZooKeeper's server offers and expects. The GSS-API framing and the wrap tokens are
// parsed here; Kerberos itself (logins, tickets, the AP messages' ASN.1, the etypes'
// cryptography) is github.com/jcmturner/gokrb5/v8.
//
// Judging gokrb5 v8.4.4. It is the only Kerberos client in pure Go that does the
// whole of it (AS and TGS exchanges from a keytab or a password, AES and the newer
// SHA-2 etypes, TGT renewal), and the one that IBM's Kafka client (sarama) and
// HashiCorp's tools build their Kerberos on; it logged in to MIT's KDC here at once.
// But it is not maintained: its last release is v8.4.4 of February 2023, and its
// issue "Does the project still have a maintainer?" (#551, September 2024) has had no
// answer from its author; a fork has started. Its API is usable but rough: no
// context.Context (a KDC's answer is bounded by krb5.conf's timeouts alone), a
// goroutine per login that renews the TGT until Destroy, and no encoder of AP-REPs
// (the tests make their own). What it pulls in: its own helpers (jcmturner/gofork's
// ASN.1, aescts, dnsutils, rpc for the PAC), hashicorp/go-uuid and golang.org/x/crypto
// (MD4 and PBKDF2). This package imports neither its spnego nor its service packages
// (HTTP, gorilla/sessions). So: depend on v8.4.4, keep it behind this package's
// GSSAPI (the only file that imports it, with the caller's client), parse every token
// of the server's here first, and fuzz what reaches gokrb5's decoders
// (FuzzGSSAPISteps); move to a maintained fork if one earns trust.
package sasl
