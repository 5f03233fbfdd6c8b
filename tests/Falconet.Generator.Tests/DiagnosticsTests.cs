using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using Shouldly;

namespace Falconet.Generator.Tests;

public sealed class DiagnosticsTests
{
    private const string Path = "/app/team.headers.json";

    [Fact]
    public void Invalid_json_is_FALC001_at_the_offending_character()
    {
        Single("""
            {
              "methods": [
                "PURGE" "BAN"
              ]
            }
            """).ShouldBe(("FALC001", 3, 13));
    }

    [Fact]
    public void Unknown_property_is_FALC002_at_the_property_name()
    {
        Single("""
            {
              "requestHeaders": [
                { "name": "X-A", "primry": true }
              ]
            }
            """).ShouldBe(("FALC002", 3, 22));
    }

    [Fact]
    public void Header_twice_in_one_file_is_FALC003_at_the_second_entry_in_any_case()
    {
        Single("""
            {
              "requestHeaders": [{ "name": "X-Team" }, { "name": "x-TEAM" }]
            }
            """).ShouldBe(("FALC003", 2, 54));
    }

    [Fact]
    public void Method_twice_in_one_file_is_FALC003_at_the_second_entry()
    {
        Single("""
            {
              "methods": ["PURGE", "PURGE"]
            }
            """).ShouldBe(("FALC003", 2, 24));
    }

    [Fact]
    public void Methods_are_case_sensitive_so_a_lower_case_twin_is_a_member_name_clash_FALC011()
    {
        Single("""
            {
              "methods": ["get"]
            }
            """).ShouldBe(("FALC011", 2, 15));
    }

    [Fact]
    public void Non_token_character_is_FALC004()
    {
        Single("""
            {
              "responseHeaders": [{ "name": "X Bad" }]
            }
            """).ShouldBe(("FALC004", 2, 33));
    }

    [Fact]
    public void Empty_name_is_FALC005()
    {
        Single("""
            {
              "methods": [""]
            }
            """).ShouldBe(("FALC005", 2, 15));
    }

    [Fact]
    public void More_than_64_bit_indexed_headers_is_FALC006_at_the_first_header_that_does_not_fit()
    {
        int defaults = Falconet.Generator.Schema.DefaultSchema.File.RequestHeaders.Count(h => !h.ContentLength);
        var json = new StringBuilder("{\n  \"requestHeaders\": [\n");
        for (int i = 0; i < 70 - defaults; i++)
        {
            json.Append("    { \"name\": \"X-Extra-").Append(i).Append("\" },\n");
        }

        json.Append("  ]\n}\n");
        int firstExcessLine = 3 + (64 - defaults);

        Single(json.ToString()).ShouldBe(("FALC006", firstExcessLine, 15));
    }

    [Fact]
    public void Method_longer_than_the_parser_accepts_is_FALC007()
    {
        Single("""
            {
              "methods": ["ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEFG"]
            }
            """).ShouldBe(("FALC007", 2, 15));
    }

    [Fact]
    public void Version_not_of_the_form_HTTP_d_d_is_FALC008()
    {
        Single("""
            {
              "versions": ["HTTP/2"]
            }
            """).ShouldBe(("FALC008", 2, 16));
    }

    [Fact]
    public void Wrong_value_type_is_FALC009_at_the_value()
    {
        Single("""
            {
              "methods": "GET"
            }
            """).ShouldBe(("FALC009", 2, 14));
    }

    [Fact]
    public void Known_value_with_a_control_character_is_FALC010()
    {
        Single("""
            {
              "requestHeaders": [{ "name": "X-A", "values": ["ok", "bad\u0001"] }]
            }
            """).ShouldBe(("FALC010", 2, 56));
    }

    [Fact]
    public void Header_whose_property_collides_with_a_collection_member_is_FALC011()
    {
        Single("""
            {
              "requestHeaders": [{ "name": "Count" }]
            }
            """).ShouldBe(("FALC011", 2, 32));
    }

    [Fact]
    public void ContentLength_flag_on_another_header_is_FALC012()
    {
        Single("""
            {
              "requestHeaders": [{ "name": "X-Size", "contentLength": true }]
            }
            """).ShouldBe(("FALC012", 2, 59));
    }

    [Fact]
    public void Property_twice_in_a_header_is_FALC015_at_the_second_one()
    {
        Single("""
            {
              "requestHeaders": [{ "name": "X-A", "name": "X-B" }]
            }
            """).ShouldBe(("FALC015", 2, 39));
    }

    [Fact]
    public void Property_twice_at_the_root_is_FALC015_at_the_second_one()
    {
        Single("""
            {
              "methods": ["PURGE"],
              "methods": ["BAN"]
            }
            """).ShouldBe(("FALC015", 3, 3));
    }

    [Fact]
    public void A_name_of_the_wrong_type_is_reported_once_as_FALC009()
    {
        Single("""
            {
              "requestHeaders": [{ "name": 5 }]
            }
            """).ShouldBe(("FALC009", 2, 32));
    }

    [Fact]
    public void Exception_inside_the_generator_becomes_FALC013_instead_of_failing_the_compiler()
    {
        var result = GeneratorHarness.Run(new ThrowingText("/app/broken.headers.json"));

        Diagnostic diagnostic = result.Diagnostics.ShouldHaveSingleItem();
        diagnostic.Id.ShouldBe("FALC013");
        diagnostic.GetMessage(System.Globalization.CultureInfo.InvariantCulture).ShouldContain("disk unplugged");
        result.Results.Single().Exception.ShouldBeNull();
        GeneratorHarness.Sources(result).Count.ShouldBe(6);
    }

    [Fact]
    public void Files_not_named_headers_json_are_ignored()
    {
        GeneratorHarness.Run(GeneratorHarness.Schema("/app/appsettings.json", "not json at all")).Diagnostics.ShouldBeEmpty();
        GeneratorHarness.Run(GeneratorHarness.Schema("/app/notes.txt", "\"requestHeaders\"")).Diagnostics.ShouldBeEmpty();
    }

    [Fact]
    public void A_method_or_version_in_an_app_schema_is_FALC016_at_its_entry_and_the_headers_are_still_generated()
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema(Path, """
            {
              "methods": ["PURGE"],
              "versions": ["HTTP/2.0"],
              "requestHeaders": [{ "name": "X-Team" }]
            }
            """));

        result.Diagnostics.Select(d => (d.Id, d.Location.GetLineSpan().StartLinePosition.Line + 1, d.Location.GetLineSpan().StartLinePosition.Character + 1))
            .ShouldBe(new[] { ("FALC016", 2, 15), ("FALC016", 3, 16) });
        result.Diagnostics.ShouldAllBe(d => d.Severity == DiagnosticSeverity.Error && d.Location.GetLineSpan().Path == Path);
        result.Diagnostics[0].GetMessage(System.Globalization.CultureInfo.InvariantCulture).ShouldContain("KnownMethod.Custom");
        GeneratorHarness.Sources(result)["HeaderSet.g.cs"].ShouldContain("XTeam");
    }

    [Theory]
    [InlineData("/app/headers.json")]
    [InlineData("/app/team-headers.json")]
    [InlineData("/app/team.header.json")]
    [InlineData("/app/team.headers.jsonc")]
    public void A_schema_in_a_file_not_named_headers_json_is_a_FALC017_warning_and_is_not_read(string path)
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema(path, """{ "requestHeaders": [{ "name": "X-Team" }] }"""));

        Diagnostic warning = result.Diagnostics.ShouldHaveSingleItem();
        warning.Id.ShouldBe("FALC017");
        warning.Severity.ShouldBe(DiagnosticSeverity.Warning);
        warning.Location.GetLineSpan().Path.ShouldBe(path);
        warning.GetMessage(System.Globalization.CultureInfo.InvariantCulture).ShouldContain(path.Substring(5));
        GeneratorHarness.Sources(result).ShouldBeEmpty();
    }

    [Fact]
    public void Other_json_files_are_left_alone()
    {
        var result = GeneratorHarness.RunApp(
            GeneratorHarness.Schema("/app/appsettings.json", """{ "Logging": { "LogLevel": { "Default": "Information" } } }"""),
            GeneratorHarness.Schema("/app/stylecop.json", """{ "settings": { } }"""));

        result.Diagnostics.ShouldBeEmpty();
        GeneratorHarness.Sources(result).ShouldBeEmpty();
    }

    [Fact]
    public void An_app_schema_without_the_runtime_referenced_is_FALC018_and_emits_nothing()
    {
        var compilation = GeneratorHarness.CreateCompilation(GeneratorHarness.ReferencesWithoutRuntime, "namespace App { internal static class Program { } }");
        var result = GeneratorHarness.CreateDriver(new[] { GeneratorHarness.Schema(Path, """{ "requestHeaders": [{ "name": "X-Team" }] }""") }, GeneratorHarness.AppNamespace, generate: null)
            .RunGenerators(compilation).GetRunResult();

        result.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC018" });
        GeneratorHarness.Sources(result).ShouldBeEmpty();
    }

    [Fact]
    public void An_app_without_a_schema_file_gets_nothing_and_no_diagnostic()
    {
        var result = GeneratorHarness.RunApp();

        result.Diagnostics.ShouldBeEmpty();
        GeneratorHarness.Sources(result).ShouldBeEmpty();
    }

    [Fact]
    public void Invalid_generate_option_is_FALC014_and_falls_back_to_the_app_header_set()
    {
        var result = GeneratorHarness.Run(new[] { GeneratorHarness.Schema(Path, """{ "requestHeaders": [{ "name": "X-Team" }] }""") }, "App", generate: "Everything");

        result.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC014" });
        GeneratorHarness.Sources(result).Keys.ShouldBe(new[] { "HeaderSet.g.cs" });
    }

    [Fact]
    public void Invalid_visibility_option_is_FALC014()
    {
        var result = GeneratorHarness.Run(System.Array.Empty<AdditionalText>(), "App", "protected");

        result.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC014" });
        GeneratorHarness.Sources(result)["KnownMethods.g.cs"].ShouldContain("public static class KnownMethods");
    }

    [Fact]
    public void Every_diagnostic_has_a_title_help_text_pointing_to_its_documentation_and_error_severity_but_a_misnamed_file()
    {
        foreach (var field in typeof(Falconet.Generator.Schema.DiagnosticDescriptors).GetFields().Where(f => f.FieldType == typeof(DiagnosticDescriptor)))
        {
            var descriptor = (DiagnosticDescriptor)field.GetValue(null)!;
            descriptor.Id.ShouldStartWith("FALC");
            descriptor.Title.ToString().ShouldNotBeNullOrWhiteSpace();
            descriptor.Description.ToString().ShouldNotBeNullOrWhiteSpace();
            descriptor.Description.ToString().ShouldContain("docs/diagnostics.md#" + descriptor.Id.ToLowerInvariant());
            descriptor.DefaultSeverity.ShouldBe(descriptor.Id == "FALC017" ? DiagnosticSeverity.Warning : DiagnosticSeverity.Error);
            Falconet.Generator.Schema.DiagnosticDescriptors.Find(descriptor.Id).ShouldBeSameAs(descriptor);
        }
    }

    [Fact]
    public void Invalid_entries_are_skipped_and_the_rest_is_still_generated()
    {
        var result = GeneratorHarness.Run(GeneratorHarness.Schema(Path, """
            { "methods": ["BAD METHOD", "PURGE"] }
            """));

        result.Diagnostics.Select(d => d.Id).ShouldBe(new[] { "FALC004" });
        GeneratorHarness.Sources(result)["KnownMethods.g.cs"].ShouldContain("Purge,");
    }

    private sealed class ThrowingText : AdditionalText
    {
        public ThrowingText(string path) => Path = path;

        public override string Path { get; }

        public override Microsoft.CodeAnalysis.Text.SourceText GetText(System.Threading.CancellationToken cancellationToken = default) =>
            throw new System.IO.IOException("disk unplugged");
    }

    // The single diagnostic of a run with one user file: its ID and 1-based line and column, as a compiler prints them.
    private static (string Id, int Line, int Column) Single(string json)
    {
        var result = GeneratorHarness.Run(GeneratorHarness.Schema(Path, json));
        Diagnostic diagnostic = result.Diagnostics.ShouldHaveSingleItem();
        FileLinePositionSpan span = diagnostic.Location.GetLineSpan();
        span.Path.ShouldBe(Path);
        diagnostic.GetMessage(System.Globalization.CultureInfo.InvariantCulture).ShouldNotBeNullOrWhiteSpace();
        return (diagnostic.Id, span.StartLinePosition.Line + 1, span.StartLinePosition.Character + 1);
    }
}
