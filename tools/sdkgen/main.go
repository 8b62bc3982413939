// Command sdkgen writes the SDKs of the tfegov package from its schema with Pulumi's own code generators (the
// packages `pulumi package gen-sdk` would run through language hosts the registries do not serve): Python, Go, .NET
// and Node.js, each in a folder of its own under the output folder.
//
//	sdkgen <schema.json> <output folder>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noOtherPackages loads no package: the schema names no other one, so any reference is a mistake.
type noOtherPackages struct{}

func (noOtherPackages) LoadPackage(pkg string, version *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s, which this generator does not load", pkg)
}

func (noOtherPackages) LoadPackageV2(ctx context.Context, descriptor *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s, which this generator does not load", descriptor.Name)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen <schema.json> <output folder>")
		os.Exit(2)
	}
	bytes, err := os.ReadFile(os.Args[1])
	check(err)
	var spec schema.PackageSpec
	check(json.Unmarshal(bytes, &spec))
	pkg, diags, err := schema.BindSpec(spec, noOtherPackages{}, schema.ValidationOptions{})
	check(err)
	if diags.HasErrors() {
		check(fmt.Errorf("the schema does not bind: %v", diags))
	}
	out := os.Args[2]
	write := func(language string, files map[string][]byte, err error) {
		check(err)
		for path, content := range files {
			target := filepath.Join(out, language, path)
			check(os.MkdirAll(filepath.Dir(target), 0o755))
			check(os.WriteFile(target, content, 0o644))
		}
	}
	const tool = "pulumi-tfe-governance sdkgen"
	files, err := python.GeneratePackage(tool, pkg, nil, nil)
	write("python", files, err)
	files, err = gogen.GeneratePackage(tool, pkg, nil)
	write("go", files, err)
	// .NET's generator downloads the package's logo from its URL (GitHub's by default, which this machine cannot
	// reach): it gets ours from a server of its own, in this process, and no URL reaches the generated files.
	logo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		check(png.Encode(w, logoImage()))
	}))
	pkg.LogoURL = logo.URL + "/logo.png"
	files, err = dotnet.GeneratePackage(tool, pkg, nil, nil)
	logo.Close()
	pkg.LogoURL = ""
	write("dotnet", files, err)
	files, err = nodejs.GeneratePackage(tool, pkg, nil, nil, false, nil)
	write("nodejs", files, err)
}

// logoImage is the package's 64x64 logo: a shield in the colours of the governance it keeps.
func logoImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			inside := x > 10 && x < 54 && y > 6 && y < 58-abs(x-32)/3
			if inside {
				img.Set(x, y, color.RGBA{R: 0x5c, G: 0x4e, B: 0xe5, A: 0xff})
			}
		}
	}
	return img
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}
