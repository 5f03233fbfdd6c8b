using System;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.CodeAnalysis;
using Shouldly;

namespace Falconet.Generator.Tests;

public sealed class CompilationTests
{
    private const string TeamSchema = """
        {
          "requestHeaders": [{ "name": "X-Team-Id", "values": ["blue"] }],
          "responseHeaders": [{ "name": "X-Served-By" }]
        }
        """;

    [Fact]
    public void Default_schema_output_compiles_without_errors_or_warnings()
    {
        CompiledOutput.Problems(CompiledOutput.Compile(CompiledOutput.DefaultSources())).ShouldBeEmpty();
    }

    [Fact]
    public void Custom_schema_output_compiles_without_errors_or_warnings()
    {
        CompiledOutput.Problems(CompiledOutput.Compile(CompiledOutput.CustomSources())).ShouldBeEmpty();
    }

    [Fact]
    public void Internal_visibility_makes_every_generated_type_internal()
    {
        var runtime = GeneratorHarness.Sources(GeneratorHarness.Run(Array.Empty<AdditionalText>(), CompiledOutput.SmokeNamespace, "internal"));
        var app = GeneratorHarness.Sources(GeneratorHarness.Run(new[] { GeneratorHarness.Schema("/app/team.headers.json", TeamSchema) }, "App.Http", "internal", generate: null));

        runtime.Values.Concat(app.Values).ShouldAllBe(text => !Regex.IsMatch(text, @"^    public ", RegexOptions.Multiline));
        app["HeaderSet.g.cs"].ShouldContain("internal readonly struct HeaderSet");
        CompiledOutput.Problems(CompiledOutput.Compile(app.Values)).ShouldBeEmpty();
        CompiledOutput.Problems(CompiledOutput.Compile(runtime.Values.Append(CompiledOutput.RuntimeConstructors(CompiledOutput.SmokeNamespace).Replace("public partial", "internal partial", StringComparison.Ordinal)))).ShouldBeEmpty();
    }

    [Fact]
    public void Namespace_falls_back_to_RootNamespace_then_Falconet_Generated()
    {
        var schema = new[] { GeneratorHarness.Schema("/app/team.headers.json", TeamSchema) };
        var root = GeneratorHarness.CreateDriver(schema, ns: null, rootNamespace: "My.App", generate: null)
            .RunGenerators(GeneratorHarness.CreateCompilation("class C { }")).GetRunResult();
        var none = GeneratorHarness.CreateDriver(schema, ns: null, generate: null)
            .RunGenerators(GeneratorHarness.CreateCompilation("class C { }")).GetRunResult();

        GeneratorHarness.Sources(root)["HeaderSet.g.cs"].ShouldContain("namespace My.App\n{");
        GeneratorHarness.Sources(none)["HeaderSet.g.cs"].ShouldContain("namespace Falconet.Generated\n{");
    }

    [Fact]
    public void An_app_schema_gets_a_header_set_with_extension_properties_for_its_own_headers_only()
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json", TeamSchema));

        result.Diagnostics.ShouldBeEmpty();
        string headerSet = GeneratorHarness.Sources(result).ShouldHaveSingleItem().Value;
        headerSet.ShouldContain("public readonly struct HeaderSet : global::Falconet.Http.IHeaderSet");
        headerSet.ShouldContain("extension(global::Falconet.Http.RequestHeaders<global::Team.Api.HeaderSet> headers)");
        headerSet.ShouldContain("extension(global::Falconet.Http.ResponseHeaders<global::Team.Api.HeaderSet> headers)");
        headerSet.ShouldContain("public global::Microsoft.Extensions.Primitives.StringValues XTeamId");
        headerSet.ShouldContain("public global::Microsoft.Extensions.Primitives.StringValues XServedBy");

        // The defaults' typed properties are inherited from the runtime's collections, never emitted again.
        headerSet.ShouldNotContain("StringValues Host");
        headerSet.ShouldContain("new global::Falconet.Http.KnownHeader(\"Host\"),");
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(result).Values)).ShouldBeEmpty();
    }

    [Fact]
    public void Every_emitted_type_carries_GeneratedCode_and_every_matched_index_its_header_name()
    {
        var sources = GeneratorHarness.Sources(GeneratorHarness.Run())
            .Concat(GeneratorHarness.Sources(GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json", TeamSchema))));

        foreach ((string hintName, string text) in sources)
        {
            // A name matcher names the header of every index it returns; the HPACK tables say which entry an index is.
            string comment = hintName.StartsWith("HPack", StringComparison.Ordinal) ? ".+" : @"[!#$%&'*+\-.^_`|~0-9A-Za-z]+";
            string[] lines = text.Split('\n');
            for (int i = 0; i < lines.Length; i++)
            {
                if (Regex.IsMatch(lines[i], @"^    (public|internal) (static |readonly |sealed )*(partial )?(class|struct|enum) "))
                {
                    lines[i - 1].ShouldBe("    [global::System.CodeDom.Compiler.GeneratedCode(\"Falconet.Generator\", \"" + FalconetGenerator.Version + "\")]");
                }

                if (Regex.IsMatch(lines[i], @"return (\d+|global::Falconet\.Http\.HeaderTable\.ContentLengthIndex);"))
                {
                    lines[i].ShouldMatch(@"return [^;]+; // " + comment + "$");
                }
            }
        }
    }
}
