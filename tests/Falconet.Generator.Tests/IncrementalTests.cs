using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Shouldly;

namespace Falconet.Generator.Tests;

public sealed class IncrementalTests
{
    private static readonly string[] s_steps =
    {
        TrackingNames.Schema, TrackingNames.Options, TrackingNames.Model, TrackingNames.Plan, TrackingNames.Diagnostics, TrackingNames.Runtime,
    };

    [Theory]
    [InlineData(GeneratorHarness.Runtime, """{ "methods": ["PURGE"] }""")]
    [InlineData(null, """{ "requestHeaders": [{ "name": "X-Team" }] }""")]
    public void Unrelated_source_edit_leaves_every_named_step_cached(string? generate, string json)
    {
        AdditionalText schema = GeneratorHarness.Schema("/app/team.headers.json", json);
        CSharpCompilation compilation = GeneratorHarness.CreateCompilation("namespace App { internal static class A { } }");
        GeneratorDriver driver = GeneratorHarness.CreateDriver(new[] { schema }, GeneratorHarness.AppNamespace, generate: generate).RunGenerators(compilation);

        CSharpCompilation edited = compilation.AddSyntaxTrees(CSharpSyntaxTree.ParseText("namespace App { internal static class B { } }"));
        GeneratorRunResult result = driver.RunGenerators(edited).GetRunResult().Results.Single();

        foreach (string step in s_steps)
        {
            Reasons(result, step).ShouldAllBe(r => r == IncrementalStepRunReason.Cached || r == IncrementalStepRunReason.Unchanged, step);
        }

        result.TrackedOutputSteps.SelectMany(s => s.Value).SelectMany(s => s.Outputs)
            .ShouldAllBe(o => o.Reason == IncrementalStepRunReason.Cached || o.Reason == IncrementalStepRunReason.Unchanged);
    }

    [Fact]
    public void Schema_edit_regenerates_the_schema_model_and_plan()
    {
        AdditionalText before = GeneratorHarness.Schema("/app/team.headers.json", """{ "methods": ["PURGE"] }""");
        AdditionalText after = GeneratorHarness.Schema("/app/team.headers.json", """{ "methods": ["PURGE", "BAN"] }""");
        CSharpCompilation compilation = GeneratorHarness.CreateCompilation("namespace App { internal static class A { } }");
        GeneratorDriver driver = GeneratorHarness.CreateDriver(new[] { before }).RunGenerators(compilation);

        GeneratorDriverRunResult run = driver.ReplaceAdditionalText(before, after).RunGenerators(compilation).GetRunResult();
        GeneratorRunResult result = run.Results.Single();

        Reasons(result, TrackingNames.Schema).ShouldBe(new[] { IncrementalStepRunReason.Modified });
        Reasons(result, TrackingNames.Model).ShouldBe(new[] { IncrementalStepRunReason.Modified });
        Reasons(result, TrackingNames.Plan).ShouldBe(new[] { IncrementalStepRunReason.Modified });
        Reasons(result, TrackingNames.Options).ShouldBe(new[] { IncrementalStepRunReason.Cached });
        GeneratorHarness.Sources(run)["KnownMethods.g.cs"].ShouldContain("Ban,");
    }

    [Fact]
    public void Whitespace_only_schema_edit_stops_at_the_schema_step()
    {
        AdditionalText before = GeneratorHarness.Schema("/app/team.headers.json", """{ "methods": ["PURGE"] }""");
        AdditionalText after = GeneratorHarness.Schema("/app/team.headers.json", "{\n  \"methods\": [\"PURGE\"]\n}\n");
        CSharpCompilation compilation = GeneratorHarness.CreateCompilation("namespace App { internal static class A { } }");
        GeneratorDriver driver = GeneratorHarness.CreateDriver(new[] { before }).RunGenerators(compilation);

        GeneratorRunResult result = driver.ReplaceAdditionalText(before, after).RunGenerators(compilation).GetRunResult().Results.Single();

        Reasons(result, TrackingNames.Plan).ShouldAllBe(r => r == IncrementalStepRunReason.Cached || r == IncrementalStepRunReason.Unchanged);
    }

    private static IEnumerable<IncrementalStepRunReason> Reasons(GeneratorRunResult result, string step)
    {
        result.TrackedSteps.ShouldContainKey(step);
        return result.TrackedSteps[step].SelectMany(s => s.Outputs).Select(o => o.Reason).ToArray();
    }
}
