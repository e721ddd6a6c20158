package discovery

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// curatorMap is what Curator 5.4's JsonInstanceSerializer writes for an instance
// with a Map payload, an SSL port and a URI spec (the peer's output, with a fixed
// time; TestCuratorRegistersGoReads compares with the real bytes).
const curatorMap = `{"name":"orders","id":"java-1","address":"10.0.0.7","port":8080,"sslPort":8443,` +
	`"payload":{"@class":"java.util.HashMap","zone":"eu-1"},"registrationTimeUTC":1700000000123,` +
	`"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},` +
	`{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},` +
	`{"value":"ssl-port","variable":true},{"value":"/api","variable":false}]}}`

// springCloud is what Spring Cloud Zookeeper writes: its own payload class.
const springCloud = `{"name":"cloud-provider-payment","id":"6d4e5121-6c17-4023-8f7b-8922f8b70cae",` +
	`"address":"DESKTOP-26GC398","port":8005,"sslPort":null,` +
	`"payload":{"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance",` +
	`"id":"application-1","name":"cloud-provider-payment","metadata":{"instance_status":"UP"}},` +
	`"registrationTimeUTC":1610116500446,"serviceType":"DYNAMIC","uriSpec":{"parts":[` +
	`{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},` +
	`{"value":":","variable":false},{"value":"port","variable":true}]}}`

// dubbo3 is what Dubbo 3's application-level registry writes: no URI spec, the id
// is host:port.
const dubbo3 = `{"name":"demo-provider","id":"192.168.1.5:20880","address":"192.168.1.5","port":20880,` +
	`"sslPort":null,"payload":{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance",` +
	`"id":"192.168.1.5:20880","name":"demo-provider","metadata":{"dubbo.metadata.revision":"a1b2c3",` +
	`"dubbo.metadata.storage-type":"local"}},"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC",` +
	`"uriSpec":null}`

func TestReadCurator(t *testing.T) {
	in, err := unmarshal([]byte(curatorMap))
	require.NoError(t, err)
	require.Equal(t, Instance{
		Name: "orders", ID: "java-1", Address: "10.0.0.7", Port: 8080, SSLPort: 8443,
		Payload:    json.RawMessage(`{"@class":"java.util.HashMap","zone":"eu-1"}`),
		Registered: time.UnixMilli(1700000000123).UTC(), Type: Dynamic,
		URISpec: "{scheme}://{address}:{ssl-port}/api",
	}, in)
	uri, err := in.URI()
	require.NoError(t, err)
	require.Equal(t, "https://10.0.0.7:8443/api", uri)
}

// What Go writes is byte for byte what Curator writes for the same instance.
func TestWriteAsCurator(t *testing.T) {
	in, err := unmarshal([]byte(curatorMap))
	require.NoError(t, err)
	out, err := in.marshal()
	require.NoError(t, err)
	require.Equal(t, curatorMap, string(out))
}

func TestReadSpringCloudAndDubbo(t *testing.T) {
	in, err := unmarshal([]byte(springCloud))
	require.NoError(t, err)
	require.Equal(t, "cloud-provider-payment", in.Name)
	require.Equal(t, 8005, in.Port)
	require.Zero(t, in.SSLPort)
	require.Contains(t, string(in.Payload), `"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"`)
	uri, err := in.URI()
	require.NoError(t, err)
	require.Equal(t, "http://DESKTOP-26GC398:8005", uri)

	in, err = unmarshal([]byte(dubbo3))
	require.NoError(t, err)
	require.Equal(t, "192.168.1.5:20880", in.ID)
	require.Equal(t, "", in.URISpec)
	var payload struct {
		Metadata map[string]string `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(in.Payload, &payload))
	require.Equal(t, "a1b2c3", payload.Metadata["dubbo.metadata.revision"])
	uri, err = in.URI()
	require.NoError(t, err)
	require.Equal(t, "", uri)
}

// Readers take what any writer gives: missing fields, unknown ones, payloads of any
// shape, the enabled field either way.
func TestReadTolerant(t *testing.T) {
	in, err := unmarshal([]byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, Instance{}, in, "missing serviceType is DYNAMIC, missing enabled is true")

	in, err = unmarshal([]byte(`{"name":"a","id":"b","future":{"x":[1]},"enabled":false,"serviceType":"PERMANENT",` +
		`"payload":["java.lang.String","hello"]}`))
	require.NoError(t, err)
	require.True(t, in.Disabled)
	require.Equal(t, Permanent, in.Type)
	require.JSONEq(t, `["java.lang.String","hello"]`, string(in.Payload))

	in, err = unmarshal([]byte(`{"enabled":true,"payload":"plain"}`))
	require.NoError(t, err)
	require.False(t, in.Disabled)
	require.Equal(t, `"plain"`, string(in.Payload))

	for _, bad := range []string{``, `not json`, `[]`, `{"port":"x"}`, `{"serviceType":"ODD"}`} {
		_, err := unmarshal([]byte(bad))
		require.ErrorIs(t, err, ErrBadInstance, "%q", bad)
	}
}

// Unset fields are null, enabled appears only when false, and nothing is escaped
// that Jackson would not escape.
func TestWriteShape(t *testing.T) {
	in := Instance{Name: "s", ID: "i", Type: Static}
	out, err := in.marshal()
	require.NoError(t, err)
	require.Equal(t, `{"name":"s","id":"i","address":null,"port":null,"sslPort":null,"payload":null,`+
		`"registrationTimeUTC":0,"serviceType":"STATIC","uriSpec":null}`, string(out))

	in = Instance{Name: "s", ID: "i", Disabled: true, URISpec: "{scheme}://<x>&{port}", Type: DynamicSequential,
		Payload: json.RawMessage(`{"@class":"java.util.HashMap","a":"<b>"}`)}
	out, err = in.marshal()
	require.NoError(t, err)
	require.Contains(t, string(out), `"serviceType":"DYNAMIC_SEQUENTIAL"`)
	require.Contains(t, string(out), `{"value":"://<x>&","variable":false}`)
	require.Contains(t, string(out), `"a":"<b>"`)
	require.True(t, json.Valid(out))
	require.Regexp(t, `,"enabled":false}$`, string(out))
	back, err := unmarshal(out)
	require.NoError(t, err)
	require.Equal(t, in, back)
}

func TestCheck(t *testing.T) {
	good := Instance{Name: "s", ID: "i"}
	require.NoError(t, good.check())
	for what, in := range map[string]Instance{
		"name":     {ID: "i"},
		"name/":    {Name: "a/b", ID: "i"},
		"id":       {Name: "s"},
		"id/":      {Name: "s", ID: "a/b"},
		"id..":     {Name: "s", ID: ".."},
		"port":     {Name: "s", ID: "i", Port: -1},
		"SSL port": {Name: "s", ID: "i", SSLPort: 70000},
		"type":     {Name: "s", ID: "i", Type: 9},
		"URI spec": {Name: "s", ID: "i", URISpec: "{scheme"},
		"payload":  {Name: "s", ID: "i", Payload: json.RawMessage(`{`)},
	} {
		err := in.check()
		require.ErrorIs(t, err, ErrInvalid, what)
	}
}

// A node holding JSON null is not an instance: it must not pass for one with no
// name, id or address (a Provider would hand it to Pick).
func TestNullIsNoInstance(t *testing.T) {
	for _, data := range []string{"null", " null\n"} {
		_, err := unmarshal([]byte(data))
		require.ErrorIs(t, err, ErrBadInstance, "%q", data)
	}
}
