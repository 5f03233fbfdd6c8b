using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;
using Shouldly;

namespace Falconet.Generator.Tests;

/// <summary>How the output changes when a team's schema changes: only where the change is, and the same on every machine.</summary>
public sealed class SchemaEvolutionTests
{
    [Theory]
    [InlineData(GeneratorHarness.Runtime)]
    [InlineData(null)]
    public void Appending_a_header_at_the_end_only_adds_lines_to_every_generated_file(string? generate)
    {
        var before = GeneratorHarness.Sources(GeneratorHarness.Run(new[] { GeneratorHarness.Schema("/app/team.headers.json", """
            {
              "requestHeaders": [{ "name": "X-Team-Id" }],
              "responseHeaders": [{ "name": "X-Served-By" }]
            }
            """) }, GeneratorHarness.AppNamespace, generate: generate));
        var after = GeneratorHarness.Sources(GeneratorHarness.Run(new[] { GeneratorHarness.Schema("/app/team.headers.json", """
            {
              "requestHeaders": [{ "name": "X-Team-Id" }, { "name": "X-Team-Region", "values": ["eu", "us"] }],
              "responseHeaders": [{ "name": "X-Served-By" }, { "name": "X-Served-Region" }]
            }
            """) }, GeneratorHarness.AppNamespace, generate: generate));

        before.Count.ShouldBe(generate is null ? 1 : 6);
        foreach ((string hintName, string text) in before)
        {
            // The second line carries the schema hash, which must change; every other line must survive, in order.
            string[] old = text.Split('\n').Skip(2).ToArray();
            string[] now = after[hintName].Split('\n').Skip(2).ToArray();
            string? missing = FirstLineNotKept(old, now);
            missing.ShouldBeNull($"{hintName}: appending headers changed or removed the line \"{missing}\"");
        }

        // Every line of a header table ends with its bit index, in order: an insertion shows as the lines whose index moved.
        foreach (string text in after.Values)
        {
            foreach (string[] table in text.Split("new global::Falconet.Http.HeaderTable(").Skip(1).Select(static part => part.Split("});")[0].Split('\n')))
            {
                string[] rows = table.Where(static line => line.Contains("// bit ", System.StringComparison.Ordinal)).ToArray();
                rows.Length.ShouldBeGreaterThan(40);
                for (int i = 0; i < rows.Length; i++)
                {
                    rows[i].ShouldEndWith(", // bit " + i.ToString(System.Globalization.CultureInfo.InvariantCulture));
                }
            }
        }

        string all = string.Concat(after.Values);
        all.ShouldContain("\"X-Served-Region\",");
        all.ShouldContain("new global::Falconet.Http.KnownHeader(\"X-Team-Region\", \"eu\", \"us\"),");
        all.ShouldContain("XTeamRegion");
    }

    [Fact]
    public void A_team_file_that_names_a_default_header_extends_its_known_values_on_that_headers_line_only()
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json", """
            {
              "requestHeaders": [{ "name": "content-type", "values": ["application/vnd.team+json", "text/plain"] }]
            }
            """));

        result.Diagnostics.ShouldBeEmpty();
        string headerSet = GeneratorHarness.Sources(result)["HeaderSet.g.cs"];
        headerSet.Split('\n').Where(line => line.Contains("KnownHeader(\"Content-Type\"")).ShouldHaveSingleItem()
            .ShouldEndWith("\"application/octet-stream\", \"application/vnd.team+json\"), // bit 6");

        // Content-Type keeps the typed property of the runtime's RequestHeaders: the app gets no property of its own for it.
        headerSet.ShouldNotContain("extension(");
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(result).Values)).ShouldBeEmpty();
    }

    [Fact]
    public void Bit_order_of_several_team_files_is_the_same_whatever_the_path_separators_and_roots()
    {
        string Emit(string first, string second) => GeneratorHarness.Sources(GeneratorHarness.RunApp(
            GeneratorHarness.Schema(first, """{ "requestHeaders": [{ "name": "X-One" }] }"""),
            GeneratorHarness.Schema(second, """{ "requestHeaders": [{ "name": "X-Two" }] }""")))["HeaderSet.g.cs"];

        string unix = Emit("/src/Dir/a.headers.json", "/src/DirA.headers.json");
        string windows = Emit(@"C:\src\Dir\a.headers.json", @"C:\src\DirA.headers.json");
        string otherRoot = Emit("/home/ci/work/Dir/a.headers.json", "/home/ci/work/DirA.headers.json");

        windows.ShouldBe(unix);
        otherRoot.ShouldBe(unix);
        // By file name first: "DirA.headers.json" sorts before "a.headers.json" (ordinal), so X-Two takes the lower bit.
        unix.IndexOf("KnownHeader(\"X-Two\")", System.StringComparison.Ordinal).ShouldBeLessThan(unix.IndexOf("KnownHeader(\"X-One\")", System.StringComparison.Ordinal));
    }

    [Fact]
    public void A_large_schema_is_emitted_whole_never_cut_off()
    {
        string values = string.Join(", ", Enumerable.Range(0, 5_000).Select(i => "\"v" + i + "\""));
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json",
            "{ \"requestHeaders\": [{ \"name\": \"X-Many\", \"values\": [" + values + "] }] }"));

        result.Diagnostics.ShouldBeEmpty();
        var sources = GeneratorHarness.Sources(result);
        sources["HeaderSet.g.cs"].ShouldContain("\"v4998\", \"v4999\"),");
        sources["HeaderSet.g.cs"].ShouldEndWith("}\n");
        CompiledOutput.Problems(CompiledOutput.Compile(sources.Values)).ShouldBeEmpty();
    }

    [Fact]
    public void A_file_listed_twice_in_AdditionalFiles_is_read_once()
    {
        const string Json = """{ "requestHeaders": [{ "name": "X-Team-Id" }] }""";
        var result = GeneratorHarness.RunApp(
            GeneratorHarness.Schema("/app/team.headers.json", Json),
            GeneratorHarness.Schema("/app/team.headers.json", Json));

        result.Diagnostics.ShouldBeEmpty();
        GeneratorHarness.Sources(result)["HeaderSet.g.cs"].Split('\n').Count(line => line.Trim().StartsWith("new global::Falconet.Http.KnownHeader(\"X-Team-Id\"), // bit ", System.StringComparison.Ordinal)).ShouldBe(1);
    }

    [Fact]
    public void A_byte_order_mark_left_in_the_text_is_ignored_and_locations_stay_right()
    {
        var clean = GeneratorHarness.Run(GeneratorHarness.Schema("/app/team.headers.json", "{ \"methods\": [\"PURGE\"] }"));
        var marked = GeneratorHarness.Run(GeneratorHarness.Schema("/app/team.headers.json", "\uFEFF{ \"methods\": [\"PURGE\"] }"));
        var markedError = GeneratorHarness.Run(GeneratorHarness.Schema("/app/team.headers.json", "\uFEFF{ \"methods\": [\"BAD METHOD\"] }"));

        marked.Diagnostics.ShouldBeEmpty();
        GeneratorHarness.Sources(marked)["KnownMethods.g.cs"].ShouldBe(GeneratorHarness.Sources(clean)["KnownMethods.g.cs"]);
        Diagnostic error = markedError.Diagnostics.ShouldHaveSingleItem();
        error.Id.ShouldBe("FALC004");
        error.Location.GetLineSpan().StartLinePosition.Character.ShouldBe(15);
    }

    [Theory]
    [InlineData("Bits")]
    [InlineData("Unknown")]
    [InlineData("Previous")]
    [InlineData("Reusable")]
    [InlineData("Content-Length-Text-Value")]
    [InlineData("Current")]
    [InlineData("Headers")]
    [InlineData("Values-Of")]
    public void Headers_named_like_the_collections_own_fields_compile(string name)
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json",
            "{ \"requestHeaders\": [{ \"name\": \"" + name + "\" }], \"responseHeaders\": [{ \"name\": \"" + name + "\" }] }"));

        result.Diagnostics.ShouldBeEmpty();
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(result).Values)).ShouldBeEmpty();
    }

    // Earlier collections had private members of these names; the shared code now lives in the runtime, where its
    // private members cannot clash with an extension or derived property.
    [Theory]
    [InlineData("Slot")]
    [InlineData("Set-Value")]
    [InlineData("Append-Known")]
    [InlineData("Name-Blob")]
    [InlineData("Content-Length-Index")]
    [InlineData("Previous-Values")]
    public void Headers_named_like_private_members_of_the_runtime_compile(string name)
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json",
            "{ \"requestHeaders\": [{ \"name\": \"" + name + "\" }], \"responseHeaders\": [{ \"name\": \"" + name + "\" }] }"));

        result.Diagnostics.ShouldBeEmpty();
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(result).Values)).ShouldBeEmpty();
    }

    [Theory]
    [InlineData("GetKnown")]
    [InlineData("Set-Known")]
    [InlineData("TryAppendMatched")]
    [InlineData("Index-Of")]
    [InlineData("Table")]
    [InlineData("Copy-To")]
    [InlineData("ContentLength")]
    [InlineData("Keys")]
    public void Headers_named_like_the_collections_own_members_are_FALC011_not_a_compile_error(string name)
    {
        var schema = GeneratorHarness.Schema("/app/team.headers.json",
            "{ \"requestHeaders\": [{ \"name\": \"" + name + "\" }], \"responseHeaders\": [{ \"name\": \"" + name + "\" }] }");
        var app = GeneratorHarness.RunApp(schema);
        var runtime = GeneratorHarness.Run(new[] { schema }, CompiledOutput.SmokeNamespace);

        app.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC011", "FALC011" });
        runtime.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC011", "FALC011" });
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(app).Values)).ShouldBeEmpty();
        CompiledOutput.Problems(CompiledOutput.Compile(GeneratorHarness.Sources(runtime).Values
            .Append(CompiledOutput.RuntimeConstructors(CompiledOutput.SmokeNamespace)))).ShouldBeEmpty();
    }

    // The first line of `old` that is not found, in order, in `now`; null when `now` only adds lines.
    private static string? FirstLineNotKept(IReadOnlyList<string> old, IReadOnlyList<string> now)
    {
        int next = 0;
        foreach (string line in old)
        {
            while (next < now.Count && now[next] != line)
            {
                next++;
            }

            if (next == now.Count)
            {
                return line;
            }

            next++;
        }

        return null;
    }
}
