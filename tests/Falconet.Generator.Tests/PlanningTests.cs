using System.Linq;
using Falconet.Generator.Planning;
using Falconet.Generator.Schema;
using Shouldly;

namespace Falconet.Generator.Tests;

public sealed class PlanningTests
{
    [Theory]
    [InlineData(1, "0+1")]
    [InlineData(3, "0+2 2+1")]
    [InlineData(4, "0+4")]
    [InlineData(12, "0+8 8+4")]
    [InlineData(15, "0+8 8+4 12+2 14+1")]
    [InlineData(29, "0+8 8+8 16+8 24+4 28+1")]
    public void Layout_covers_a_name_with_8_4_2_1_byte_chunks_in_order(int length, string expected)
    {
        string.Join(" ", ByteChunks.Layout(0, length).Select(c => c.Offset + "+" + c.Size)).ShouldBe(expected);
    }

    [Fact]
    public void CaseInsensitive_masks_letters_with_DF_and_other_bytes_with_FF_little_endian()
    {
        ByteChunk[] chunks = ByteChunks.CaseInsensitive("Content-Type").ToArray();

        chunks.Length.ShouldBe(2);
        chunks[0].ShouldBe(new ByteChunk(0, 8, 0xFFDFDFDFDFDFDFDFUL, 0x2D544E45544E4F43UL)); // "CONTENT-", '-' kept exact
        chunks[1].ShouldBe(new ByteChunk(8, 4, 0xDFDFDFDFUL, 0x45505954UL));                 // "TYPE"
    }

    [Fact]
    public void CaseInsensitive_chunks_accept_exactly_the_case_variants_of_the_name()
    {
        const string name = "X-a1~Zq";
        ByteChunk[] chunks = ByteChunks.CaseInsensitive(name).ToArray();
        byte[] input = System.Text.Encoding.ASCII.GetBytes(name);
        for (int position = 0; position < input.Length; position++)
        {
            byte original = input[position];
            for (int value = 0; value < 256; value++)
            {
                input[position] = (byte)value;
                bool expected = char.ToUpperInvariant((char)value) == char.ToUpperInvariant((char)original) && value < 128;
                Matches(chunks, input).ShouldBe(expected, $"byte 0x{value:X2} at {position}");
            }

            input[position] = original;
        }
    }

    [Fact]
    public void PlanMethod_masks_a_short_method_and_its_space_into_one_ulong()
    {
        MethodPlan plan = MethodPlanner.PlanMethod("GET");

        plan.Member.ShouldBe("Get");
        plan.Length.ShouldBe(3);
        plan.MinimumSpan.ShouldBe(8);
        plan.Chunks.ToArray().ShouldBe(new[] { new ByteChunk(0, 8, 0x00000000FFFFFFFFUL, 0x0000000020544547UL) });
    }

    [Fact]
    public void PlanMethod_chains_exact_chunks_for_a_method_of_8_or_more_characters()
    {
        MethodPlan plan = MethodPlanner.PlanMethod("PROPFIND");

        plan.MinimumSpan.ShouldBe(9);
        plan.Chunks.ToArray().ShouldBe(new[]
        {
            new ByteChunk(0, 8, ulong.MaxValue, 0x444E4946504F5250UL), // "PROPFIND"
            new ByteChunk(8, 1, 0xFFUL, 0x20UL),                       // " "
        });
    }

    [Fact]
    public void PlanVersion_packs_the_8_version_bytes_little_endian()
    {
        VersionPlan plan = MethodPlanner.PlanVersion("HTTP/1.1");

        plan.Member.ShouldBe("Http11");
        plan.Value.ShouldBe(0x312E312F50545448UL);
    }

    [Fact]
    public void HeaderPlanner_orders_buckets_by_length_with_primary_headers_first_then_schema_order()
    {
        HeaderSetPlan plan = HeaderPlanner.Plan("RequestHeaders", EquatableArray.From(new[]
        {
            Header("Date"),
            Header("Accept"),
            Header("Host", primary: true),
            Header("ETag"),
        }));

        plan.Buckets.Select(b => b.Length).ShouldBe(new[] { 4, 6 });
        plan.Buckets[0].Order.Select(i => plan.Headers[i].Name).ShouldBe(new[] { "Host", "Date", "ETag" });
        plan.Buckets[0].Reads.ToArray().ShouldBe(new[] { new ByteChunk(0, 4, 0, 0) });
        plan.Headers.Select(h => h.BitIndex).ShouldBe(new[] { 0, 1, 2, 3 });
    }

    [Fact]
    public void HeaderPlanner_keeps_Content_Length_outside_the_bit_set()
    {
        HeaderSetPlan plan = HeaderPlanner.Plan("ResponseHeaders", EquatableArray.From(new[]
        {
            Header("Server"),
            new HeaderModel("Content-Length", false, true, EquatableArray<string>.Empty),
            Header("Date"),
        }));

        plan.BitCount.ShouldBe(2);
        plan.Headers.Select(h => (h.Name, h.BitIndex, h.IsContentLength)).ShouldBe(new[] { ("Server", 0, false), ("Date", 1, false), ("Content-Length", -1, true) });
        plan.Buckets.Single(b => b.Length == 14).Order.Select(i => plan.Headers[i].Name).ShouldBe(new[] { "Content-Length" });
    }

    [Theory]
    [InlineData("Sec-CH-UA", "SecChUa")]
    [InlineData("ETag", "ETag")]
    [InlineData("traceparent", "Traceparent")]
    [InlineData("WWW-Authenticate", "WwwAuthenticate")]
    [InlineData("X-Real-IP", "XRealIp")]
    [InlineData("HTTP/1.1", "Http11")]
    [InlineData("1xx-Code", "_1xxCode")]
    [InlineData("~", "X7E")]
    public void ToPascalCase_is_deterministic_and_drops_separators(string name, string expected)
    {
        MemberNames.ToPascalCase(name).ShouldBe(expected);
    }

    [Fact]
    public void Hash_changes_with_the_schema_and_not_between_runs()
    {
        string first = GenerationPlanner.Hash(CustomSchema.Model);

        first.Length.ShouldBe(16);
        GenerationPlanner.Hash(CustomSchema.Model).ShouldBe(first);
        GenerationPlanner.Hash(CustomSchema.Model with { Versions = EquatableArray.From(new[] { "HTTP/1.0" }) }).ShouldNotBe(first);
    }

    private static HeaderModel Header(string name, bool primary = false) => new(name, primary, false, EquatableArray<string>.Empty);

    private static bool Matches(ByteChunk[] chunks, byte[] input)
    {
        foreach (ByteChunk chunk in chunks)
        {
            ulong value = 0;
            for (int i = 0; i < chunk.Size; i++)
            {
                value |= (ulong)input[chunk.Offset + i] << (8 * i);
            }

            if ((value & chunk.Mask) != chunk.Value)
            {
                return false;
            }
        }

        return true;
    }
}
