using System;
using System.Linq;
using Falconet.Generator.Schema;
using Microsoft.CodeAnalysis;
using Shouldly;

namespace Falconet.Generator.Tests;

/// <summary>
/// The HPACK static table and Huffman code are data of the default schema, checked where they are read: each mistake a
/// diagnostic (FALC019 to FALC023) at its line in the JSON, and an app's file may not carry them at all.
/// </summary>
public sealed class HPackSchemaTests
{
    [Fact]
    public void The_default_schema_holds_RFC_7541s_tables_without_a_diagnostic()
    {
        SchemaFile file = DefaultSchema.File;

        file.Diagnostics.ShouldBeEmpty();
        HPackModel model = file.HPack!.Model.ShouldNotBeNull();
        model.StaticTable.Count.ShouldBe(61);
        model.StaticTable[1].ShouldBe(new HPackStaticEntry(":method", "GET"));
        model.StaticTable[60].ShouldBe(new HPackStaticEntry("www-authenticate", ""));
        model.Huffman.Count.ShouldBe(257);
        model.Huffman['a'].ShouldBe(new HuffmanCode(0x3, 5));
        model.Huffman[256].ShouldBe(new HuffmanCode(0x3fffffff, 30));
    }

    [Fact]
    public void An_app_file_with_an_hpack_section_is_FALC019_at_the_property()
    {
        var result = GeneratorHarness.RunApp(GeneratorHarness.Schema("/app/team.headers.json", """
            {
              "requestHeaders": [{ "name": "X-A" }],
              "hpack": { "staticTable": [], "huffman": [] }
            }
            """));

        Diagnostic falc019 = result.Diagnostics.Single(d => d.Id == "FALC019");
        falc019.Location.GetLineSpan().StartLinePosition.Line.ShouldBe(2);
        falc019.Location.GetLineSpan().StartLinePosition.Character.ShouldBe(2);
        falc019.GetMessage(System.Globalization.CultureInfo.InvariantCulture).ShouldContain("team.headers.json");
    }

    [Fact]
    public void A_static_table_with_an_entry_missing_is_FALC020_at_the_array()
    {
        Problems(Default(static text => text.Replace("      { \"index\": 61, \"name\": \"www-authenticate\" }\n", "", StringComparison.Ordinal)
                .Replace("{ \"index\": 60, \"name\": \"via\" },", "{ \"index\": 60, \"name\": \"via\" }", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC020" && p.Message.Contains("has 60 entries") && p.Text == "[");
    }

    [Fact]
    public void A_static_table_entry_out_of_order_is_FALC020_at_its_index()
    {
        Problems(Default(static text => text.Replace("{ \"index\": 5, \"name\": \":path\"", "{ \"index\": 6, \"name\": \":path\"", StringComparison.Ordinal)))
            .ShouldHaveSingleItem().ShouldSatisfyAllConditions(
                p => p.Id.ShouldBe("FALC020"),
                p => p.Text.ShouldBe("6"),
                p => p.Message.ShouldContain("entry 5 has index 6"));
    }

    [Fact]
    public void A_static_table_name_with_upper_case_is_FALC021_at_the_name()
    {
        Problems(Default(static text => text.Replace("\"name\": \"content-type\"", "\"name\": \"Content-Type\"", StringComparison.Ordinal)))
            .ShouldHaveSingleItem().ShouldSatisfyAllConditions(
                p => p.Id.ShouldBe("FALC021"),
                p => p.Text.ShouldBe("\"Content-Type\""),
                p => p.Message.ShouldContain("lower case"));
    }

    [Fact]
    public void A_static_table_name_that_is_no_pseudo_header_is_FALC021()
    {
        Problems(Default(static text => text.Replace("\"name\": \":authority\"", "\"name\": \":host\"", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC021" && p.Text == "\":host\"");
    }

    [Fact]
    public void A_Huffman_code_with_a_symbol_missing_is_FALC022_at_the_array()
    {
        Problems(Default(static text => text.Replace("      { \"symbol\": 255, \"code\": \"0x3ffffee\", \"bits\": 26 },\n", "", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC022" && p.Message.Contains("has 256 entries") && p.Text == "[");
    }

    [Fact]
    public void A_Huffman_code_that_starts_with_another_is_FALC023_at_that_entry()
    {
        // 'b' given 000110, which starts with 'a' (00011).
        Problems(Default(static text => text.Replace("{ \"symbol\": 98, \"code\": \"0x23\", \"bits\": 6 }", "{ \"symbol\": 98, \"code\": \"0x6\", \"bits\": 6 }", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC023" && p.Message.Contains("Symbol 98") && p.Message.Contains("starts with the code of symbol 97"));
    }

    [Fact]
    public void A_Huffman_code_that_leaves_sequences_without_a_symbol_is_FALC023()
    {
        // 'a' one bit longer (000110): still a prefix code, but input starting 000111 would start no code.
        Problems(Default(static text => text.Replace("{ \"symbol\": 97, \"code\": \"0x3\", \"bits\": 5 }", "{ \"symbol\": 97, \"code\": \"0x6\", \"bits\": 6 }", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC023" && p.Message.Contains("not complete") && p.Text == "[");
    }

    [Fact]
    public void An_EOS_that_is_not_all_ones_is_FALC023_since_padding_is_checked_as_its_leading_bits()
    {
        Problems(Default(static text => text.Replace("\"code\": \"0x3fffffff\", \"bits\": 30", "\"code\": \"0x3ffffffx\", \"bits\": 30", StringComparison.Ordinal)
                .Replace("\"code\": \"0x3ffffffe\", \"bits\": 30", "\"code\": \"0x3fffffff\", \"bits\": 30", StringComparison.Ordinal)
                .Replace("0x3ffffffx", "0x3ffffffe", StringComparison.Ordinal)))
            .ShouldHaveSingleItem().ShouldSatisfyAllConditions(
                p => p.Id.ShouldBe("FALC023"),
                p => p.Message.ShouldContain("EOS (256)"),
                p => p.Message.ShouldContain("all ones"));
    }

    [Fact]
    public void A_code_that_does_not_fit_its_bits_is_FALC023_at_the_code()
    {
        Problems(Default(static text => text.Replace("{ \"symbol\": 48, \"code\": \"0x0\", \"bits\": 5 }", "{ \"symbol\": 48, \"code\": \"0x20\", \"bits\": 5 }", StringComparison.Ordinal)))
            .ShouldContain(p => p.Id == "FALC023" && p.Text == "\"0x20\"" && p.Message.Contains("does not fit in 5 bits"));
    }

    private static string Default(Func<string, string> edit)
    {
        string text = edit(DefaultSchema.Text);
        text.ShouldNotBe(DefaultSchema.Text, "the edit did not apply");
        return text;
    }

    private static (string Id, string Message, string Text)[] Problems(string json)
    {
        SchemaFile file = SchemaReader.Read(DefaultSchema.Path, json);
        file.HPack?.Model.ShouldBeNull();
        return file.Diagnostics.Select(info =>
        {
            Diagnostic diagnostic = info.ToDiagnostic();
            string text = json.Substring(info.Location.Start, info.Location.Length);
            return (diagnostic.Id, diagnostic.GetMessage(System.Globalization.CultureInfo.InvariantCulture), text);
        }).ToArray();
    }
}
