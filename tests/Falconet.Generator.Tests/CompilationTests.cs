using System.Linq;
using Shouldly;

namespace Falconet.Generator.Tests;

public sealed class CompilationTests
{
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
        var sources = GeneratorHarness.Sources(GeneratorHarness.Run(System.Array.Empty<Microsoft.CodeAnalysis.AdditionalText>(), "App.Http", "internal"));

        sources.Values.ShouldAllBe(text => !text.Contains("public enum") && !text.Contains("public static class") && !text.Contains("public sealed partial class"));
        CompiledOutput.Problems(CompiledOutput.Compile(sources.Values)).ShouldBeEmpty();
    }

    [Fact]
    public void Namespace_falls_back_to_RootNamespace_then_Falconet_Generated()
    {
        var root = GeneratorHarness.CreateDriver(ns: null, rootNamespace: "My.App")
            .RunGenerators(GeneratorHarness.CreateCompilation("class C { }")).GetRunResult();
        var none = GeneratorHarness.CreateDriver(ns: null)
            .RunGenerators(GeneratorHarness.CreateCompilation("class C { }")).GetRunResult();

        GeneratorHarness.Sources(root)["KnownMethods.g.cs"].ShouldContain("namespace My.App\n{");
        GeneratorHarness.Sources(none)["KnownMethods.g.cs"].ShouldContain("namespace Falconet.Generated\n{");
    }

    [Fact]
    public void User_schema_entries_are_appended_after_the_defaults()
    {
        var result = GeneratorHarness.Run(GeneratorHarness.Schema("/app/team.headers.json", """
            {
              "methods": ["PURGE"],
              "requestHeaders": [{ "name": "X-Team-Id", "values": ["blue"] }],
              "responseHeaders": [{ "name": "X-Served-By" }]
            }
            """));

        result.Diagnostics.ShouldBeEmpty();
        var sources = GeneratorHarness.Sources(result);
        sources["KnownMethods.g.cs"].ShouldContain("        Options,\n\n        /// <summary>The \"PURGE\" method.</summary>\n        Purge,\n    }");
        sources["RequestHeaders.g.cs"].ShouldContain("public global::Microsoft.Extensions.Primitives.StringValues XTeamId");
        sources["ResponseHeaders.g.cs"].ShouldContain("+ \"\\r\\nX-Served-By: \"u8 //");
        CompiledOutput.Problems(CompiledOutput.Compile(sources.Values)).ShouldBeEmpty();
    }
}
