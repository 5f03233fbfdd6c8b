using System;
using System.Text;
using Falconet.HPack.Tests.Support;
using Falconet.Http;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>
/// Where fields land: a static entry in its generated slot, a dynamic entry in the slot resolved when it was inserted
/// (no name compared again), pseudo-headers by code; and which fields make a block malformed (RFC 9113 section 8.2.1).
/// </summary>
public sealed class DecoderFieldTests
{
    [Fact]
    public void A_static_entry_lands_in_its_generated_slot_without_asking_for_its_name()
    {
        using var session = new DecoderSession();

        // host (38) with a literal value, user-agent (58) likewise, content-length (28).
        session.Decode([0x0F, 0x17, .. DecoderLimitTests.StringLiteral("example.com"), 0x0F, 0x2B, .. DecoderLimitTests.StringLiteral("curl"),
            0x0F, 0x0D, .. DecoderLimitTests.StringLiteral("12")]).ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe(["host: example.com", "user-agent: curl", "content-length: 12"]);
        session.Recording.Slots.ShouldBe([RequestHeaders.IndexOf("host"u8), RequestHeaders.IndexOf("user-agent"u8), HeaderTable.ContentLengthIndex]);
        session.Recording.Resolved.ShouldBeEmpty();
    }

    [Fact]
    public void A_static_name_the_default_schema_lacks_is_resolved_once_per_connection()
    {
        using var session = new DecoderSession();
        byte[] from = [0x0F, 0x16, .. DecoderLimitTests.StringLiteral("user@example.com")];

        session.Decode(from).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Resolved.ShouldBe(["from"]);
        session.Recording.Slots.ShouldBe([-1]);

        session.Decode(from).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Resolved.ShouldBeEmpty();
        session.Recording.Fields.ShouldBe(["from: user@example.com"]);
    }

    [Fact]
    public void A_header_set_that_knows_a_static_name_gets_it_in_its_own_slot()
    {
        using var decoder = new HPackDecoder();
        var handler = new TeamSetHandler();

        // "from" is not a default request header; a team's set (here, slot 60) may have it.
        decoder.Decode([0x0F, 0x16, .. DecoderLimitTests.StringLiteral("a@b")], ref handler).ShouldBe(HPackDecodeResult.Success);

        handler.LastSlot.ShouldBe(60);
    }

    [Fact]
    public void A_dynamic_entry_is_resolved_when_it_is_inserted_and_never_again()
    {
        using var session = new DecoderSession();

        session.Decode(DecoderLimitTests.Literal(indexing: true, "sec-fetch-mode", "navigate")).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Resolved.ShouldBe(["sec-fetch-mode"]);
        int slot = RequestHeaders.IndexOf("sec-fetch-mode"u8);
        session.Recording.Slots.ShouldBe([slot]);

        session.Decode("be be").ShouldBe(HPackDecodeResult.Success);
        session.Recording.Resolved.ShouldBeEmpty();
        session.Recording.Slots.ShouldBe([slot, slot]);
    }

    [Fact]
    public void An_entry_whose_name_is_indexed_takes_the_slot_of_that_name()
    {
        using var session = new DecoderSession();

        // accept-language (17) with incremental indexing: the entry's slot comes from the static table.
        session.Decode([0x40 | 17, .. DecoderLimitTests.StringLiteral("en-US")]).ShouldBe(HPackDecodeResult.Success);
        session.Decode("be").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Slots.ShouldBe([RequestHeaders.IndexOf("accept-language"u8)]);
        session.Recording.Resolved.ShouldBeEmpty();
    }

    [Fact]
    public void Pseudo_headers_arrive_as_codes_from_the_static_table_a_literal_name_or_an_entry()
    {
        using var session = new DecoderSession();
        byte[] block =
        [
            0x82, 0x87, 0x44, .. DecoderLimitTests.StringLiteral("/a"),
            0x40, .. DecoderLimitTests.StringLiteral(":authority"), .. DecoderLimitTests.StringLiteral("h"),
            0x00, .. DecoderLimitTests.StringLiteral(":protocol"), .. DecoderLimitTests.StringLiteral("websocket"),
        ];

        session.Decode(block).ShouldBe(HPackDecodeResult.Success);
        session.Decode("be bf").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe([":authority: h", ":path: /a"]);
        session.Recording.Resolved.ShouldBeEmpty();
    }

    [Theory]
    [InlineData("Host")] // upper case: RFC 9113 section 8.2.1
    [InlineData("x-Custom")]
    [InlineData("x custom")] // not a token
    [InlineData("x:y")]
    [InlineData(":foo")] // an undefined pseudo-header: section 8.3
    [InlineData(":")]
    [InlineData("")]
    public void A_name_that_is_not_a_lower_case_token_makes_the_block_malformed(string name)
    {
        using var session = new DecoderSession();

        session.Decode([0x82, .. DecoderLimitTests.Literal(indexing: false, name, "v"), 0x84]).ShouldBe(HPackDecodeResult.MalformedField);

        session.Recording.Fields.ShouldBe([":method: GET"]);
        session.Recording.Resolved.ShouldBeEmpty();
    }

    [Theory]
    [InlineData("a\rb")]
    [InlineData("a\nb")]
    [InlineData("a\0b")]
    [InlineData("a\u0001b")]
    [InlineData("a\u007Fb")]
    [InlineData(" leading")]
    [InlineData("trailing\t")]
    public void A_value_a_request_may_not_carry_makes_the_block_malformed(string value)
    {
        using var session = new DecoderSession();

        session.Decode(DecoderLimitTests.Literal(indexing: false, "x-a", value)).ShouldBe(HPackDecodeResult.MalformedField);
    }

    [Theory]
    [InlineData("a\rb")]
    [InlineData("a\nb")]
    [InlineData("a\0b")]
    [InlineData("\u0001")]
    [InlineData("a\u001Fb")]
    [InlineData("a\u007Fb")]
    [InlineData(" leading")]
    [InlineData("trailing\t")]
    [InlineData("\t")]
    public void A_Huffman_value_a_request_may_not_carry_makes_the_block_malformed_and_stays_so_in_the_table(string value)
    {
        using var session = new DecoderSession();

        session.Decode([0x40, .. DecoderLimitTests.StringLiteral("x-a"), .. DecoderLimitTests.HuffmanStringLiteral(value)]).ShouldBe(HPackDecodeResult.MalformedField);
        session.Decode("be").ShouldBe(HPackDecodeResult.MalformedField);
    }

    [Fact]
    public void Values_with_inner_spaces_tabs_and_octets_above_127_are_delivered_as_on_HTTP_1_1()
    {
        using var session = new DecoderSession();

        session.Decode(DecoderLimitTests.Literal(indexing: false, "x-a", "a b\tc\u00e9")).ShouldBe(HPackDecodeResult.Success);
        session.Decode(DecoderLimitTests.Literal(indexing: false, "x-a", "")).ShouldBe(HPackDecodeResult.Success);

        session.Decode([0x00, .. DecoderLimitTests.StringLiteral("x-b"), .. DecoderLimitTests.HuffmanStringLiteral("a b\tc\u00e9\u00ff~"),
            0x00, .. DecoderLimitTests.StringLiteral("x-c"), .. DecoderLimitTests.HuffmanStringLiteral("")]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(["x-b: a b\tc\u00e9\u00ff~", "x-c: "]);
    }

    [Fact]
    public void A_malformed_entry_stays_malformed_for_every_block_that_refers_to_it_and_the_others_decode()
    {
        using var session = new DecoderSession();

        session.Decode(DecoderLimitTests.Literal(indexing: true, "X-Upper", "v")).ShouldBe(HPackDecodeResult.MalformedField);
        session.Decode("be").ShouldBe(HPackDecodeResult.MalformedField);
        session.Decode([0x40 | 62, .. DecoderLimitTests.StringLiteral("w")]).ShouldBe(HPackDecodeResult.MalformedField);
        session.Decode("82").ShouldBe(HPackDecodeResult.Success);
        session.Decoder.DynamicTableCount.ShouldBe(2);
    }

    /// <summary>A handler standing for a team's header set that has "from" in slot 60.</summary>
    private struct TeamSetHandler : IHPackHeaderHandler
    {
        public int LastSlot;

        public readonly int ResolveSlot(ReadOnlySpan<byte> name) => name.SequenceEqual("from"u8) ? 60 : RequestHeaders.IndexOf(name);

        public readonly void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value)
        {
        }

        public void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ulong valueId) => LastSlot = slot;
    }
}
