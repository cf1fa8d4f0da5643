package analyze

import (
	"reflect"
	"testing"
)

// A decode that outlives its load (the load was cancelled, and the loader let go of its
// tables while the decodes it had started were still running) decodes without sharing
// rather than crashing, and gives what a shared decode gives.
func TestADecodeWithoutTheLoadersTablesStillDecodes(t *testing.T) {
	const list = `{"kind":"PodList","items":[
{"metadata":{"name":"a","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","ports":[{"containerPort":8080}]}],"tolerations":[{"key":"k","operator":"Exists"}]}},
{"metadata":{"name":"b","namespace":"shop"},"spec":{"containers":[{"name":"app","image":"web:1","ports":[{"containerPort":8080}]}],"tolerations":[{"key":"k","operator":"Exists"}]}}]}`
	dec := kindDecoders[Pods].decode
	shared := dec(newSharedDecode(), []byte(list))
	alone := dec(nil, []byte(list))
	if shared.err != nil || alone.err != nil {
		t.Fatalf("errors: shared %v, alone %v", shared.err, alone.err)
	}
	if !reflect.DeepEqual(shared, alone) {
		t.Errorf("a decode without sharing differs:\n%+v\n%+v", alone, shared)
	}
}
