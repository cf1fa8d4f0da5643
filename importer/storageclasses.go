package importer

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// A StorageClass decides whether a claim without a class is provisioned (the default
// class) and how: tickets about a Pending claim paste `kubectl get storageclass` or
// `kubectl describe storageclass` beside it.

// tableStorageClasses is `kubectl get storageclass` (printStorageClass): NAME (with
// "(default)" after the default class's name), PROVISIONER, RECLAIMPOLICY,
// VOLUMEBINDINGMODE, ALLOWVOLUMEEXPANSION, AGE.
const tableStorageClasses = "kubectl get storageclass table"

// segDescribeStorageClass is `kubectl describe storageclass` (k8s.io/kubectl
// pkg/describe StorageClassDescriber): Name, IsDefaultClass, Annotations, Provisioner,
// Parameters, AllowVolumeExpansion, MountOptions, ReclaimPolicy, VolumeBindingMode.
const segDescribeStorageClass = "kubectl describe storageclass"

// defaultClassAnnotation marks the default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// isStorageClassesHeader tells the header of `kubectl get storageclass`.
func isStorageClassesHeader(cells []string) bool {
	want := map[string]bool{"NAME": true, "PROVISIONER": true}
	other := false
	for _, c := range cells {
		delete(want, c)
		other = other || c == "RECLAIMPOLICY" || c == "VOLUMEBINDINGMODE"
	}
	return len(want) == 0 && other
}

// isDescribeStorageClassStart tells whether lines[i] starts `kubectl describe
// storageclass`: "Name:", then "IsDefaultClass:".
func isDescribeStorageClassStart(lines []textLine, i int) bool {
	return isDescribeBlockStart(lines, i, "IsDefaultClass:")
}

// parseStorageClassesTable reads `kubectl get storageclass` rows into StorageClasses.
func parseStorageClassesTable(lines []textLine) ([]rawObject, []string) {
	return tableObjects(lines, "storageclass", func(cells map[string]string) (rawObject, error) {
		name, def := strings.CutSuffix(strings.TrimSpace(cells["NAME"]), " (default)")
		if !isDNSName(name) || cells["PROVISIONER"] == "" {
			return rawObject{}, errNotARow
		}
		return storageClassObject(name, def, cells["PROVISIONER"], cells["RECLAIMPOLICY"], cells["VOLUMEBINDINGMODE"], "kubectl get storageclass")
	})
}

// describeStorageClass reads one `kubectl describe storageclass` block.
func describeStorageClass(lines []textLine) (rawObject, []string) {
	var name, provisioner, reclaim, binding string
	def := false
	marginKeys(lines, func(key, val string) {
		switch key {
		case "Name":
			name = val
		case "IsDefaultClass":
			def = val == "Yes"
		case "Annotations":
			def = def || strings.Contains(val, defaultClassAnnotation+"=true")
		case "Provisioner":
			provisioner = val
		case "ReclaimPolicy":
			reclaim = val
		case "VolumeBindingMode":
			binding = val
		}
	})
	if !isDNSName(name) {
		return rawObject{}, []string{fmt.Sprintf("line %d: describe storageclass output without a Name", lines[0].n)}
	}
	o, err := storageClassObject(name, def, provisioner, reclaim, binding, "kubectl describe storageclass")
	if err != nil {
		return rawObject{}, []string{err.Error()}
	}
	o.line = lines[0].n
	return o, nil
}

// storageClassObject builds the StorageClass an output shows, its default marking
// written as the annotation the API keeps ("true" or "false", so that a class shown
// as not the default is known as such).
func storageClassObject(name string, def bool, provisioner, reclaim, binding, from string) (rawObject, error) {
	sc := storagev1.StorageClass{
		TypeMeta: metav1.TypeMeta{Kind: "StorageClass", APIVersion: "storage.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			"podflow.dev/converted-from": from, defaultClassAnnotation: fmt.Sprint(def), bundle.PartialAnnotation: "parameters"}},
		Provisioner: provisioner,
	}
	if reclaim != "" && reclaim != "<unset>" {
		p := corev1.PersistentVolumeReclaimPolicy(reclaim)
		sc.ReclaimPolicy = &p
	}
	if binding != "" && binding != "<unset>" {
		m := storagev1.VolumeBindingMode(binding)
		sc.VolumeBindingMode = &m
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return rawObject{}, err
	}
	return rawObject{kind: "StorageClass", name: name, data: data}, nil
}
