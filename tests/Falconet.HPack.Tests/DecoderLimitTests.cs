using System;
using System.Linq;
using System.Text;
using Falconet.HPack.Tests.Support;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>
/// The limits: a block that would deliver too large a header list, or a string past the limit, is refused for its
/// stream but decoded to its end, so the dynamic table stays in step with the peer and the next block decodes.
/// </summary>
public sealed class DecoderLimitTests
{
    [Fact]
    public void A_small_block_that_repeats_one_large_entry_is_refused_the_HPACK_bomb()
    {
        using var session = new DecoderSession();
        session.Decode(Literal(indexing: true, "x-big", new string('b', 4000))).ShouldBe(HPackDecodeResult.Success);

        // 1,000 bytes of block, each byte a reference to the 4 KiB entry: 4 MiB of header list.
        byte[] bomb = Enumerable.Repeat((byte)0xBE, 1000).ToArray();
        session.Decode(bomb).ShouldBe(HPackDecodeResult.HeaderListTooLarge);

        // Delivered up to the limit (32 KiB in RFC 9113's accounting: name + value + 32 per field), not one past it.
        session.Recording.Fields.Count.ShouldBe(HPackDecoder.DefaultMaxHeaderListSize / (5 + 4000 + 32));
        session.Decode("be").ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(["x-big: " + new string('b', 4000)]);
    }

    [Fact]
    public void The_header_list_counts_32_bytes_per_field_so_many_empty_fields_are_refused_too()
    {
        using var session = new DecoderSession(maxHeaderListSize: 320);

        // ":method: GET" is 7 + 3 + 32 = 42 bytes: 7 fit in 320, the 8th does not.
        session.Decode(Enumerable.Repeat((byte)0x82, 7).ToArray()).ShouldBe(HPackDecodeResult.Success);
        session.Decode(Enumerable.Repeat((byte)0x82, 8).ToArray()).ShouldBe(HPackDecodeResult.HeaderListTooLarge);
        session.Recording.Fields.Count.ShouldBe(7);
    }

    [Fact]
    public void A_refused_block_still_updates_the_dynamic_table()
    {
        using var session = new DecoderSession(maxHeaderListSize: 100);
        byte[] block = [.. Literal(indexing: true, "x-one", new string('1', 80)), .. Literal(indexing: true, "x-two", "2")];

        session.Decode(block).ShouldBe(HPackDecodeResult.HeaderListTooLarge);
        session.Decoder.DynamicTableCount.ShouldBe(2);

        // Index 62 is the newest entry, which the refused block added after its limit was passed.
        session.Decode("be").ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(["x-two: 2"]);
    }

    [Fact]
    public void A_value_longer_than_the_string_limit_refuses_the_block_but_is_still_stored()
    {
        using var session = new DecoderSession(maxStringLength: 100);

        session.Decode(Literal(indexing: true, "x-long", new string('v', 101))).ShouldBe(HPackDecodeResult.HeaderListTooLarge);
        session.Recording.Fields.ShouldBeEmpty();
        session.Decoder.DynamicTableCount.ShouldBe(1);
    }

    [Fact]
    public void A_Huffman_string_longer_than_the_table_and_the_limit_empties_the_table_as_RFC_7541_section_4_4_says()
    {
        using var session = new DecoderSession(maxStringLength: 100);
        session.Decode(Literal(indexing: true, "x-small", "s")).ShouldBe(HPackDecodeResult.Success);

        // 20,000 'a' Huffman-encoded: more than the 4096-byte table and the 100-byte limit, so it is checked, not kept.
        byte[] value = Encoding.ASCII.GetBytes(new string('a', 20_000));
        byte[] huffman = new byte[HuffmanCodec.GetEncodedLength(value)];
        HuffmanCodec.Encode(value, huffman);
        session.Decode([0x40, .. StringLiteral("x-huge"), .. HuffmanString(huffman)]).ShouldBe(HPackDecodeResult.HeaderListTooLarge);

        session.Decoder.DynamicTableCount.ShouldBe(0);
        session.Decode("82").ShouldBe(HPackDecodeResult.Success);
    }

    [Fact]
    public void A_field_larger_than_the_table_empties_it_and_is_still_delivered()
    {
        using var session = new DecoderSession(maxDynamicTableSize: 256);
        session.Decode([.. Hex.Bytes("3fe101"), .. Literal(indexing: true, "x-a", "a")]).ShouldBe(HPackDecodeResult.Success);

        session.Decode(Literal(indexing: true, "x-large", new string('l', 300))).ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe(["x-large: " + new string('l', 300)]);
        session.Decoder.DynamicTableCount.ShouldBe(0);
        session.Decoder.DynamicTableSize.ShouldBe(0);
    }

    [Fact]
    public void A_new_entry_may_take_its_name_from_the_entry_it_evicts()
    {
        using var session = new DecoderSession(maxDynamicTableSize: 256);
        session.Decode([.. Hex.Bytes("3fe101"), .. Literal(indexing: true, "x-name", new string('1', 180))]).ShouldBe(HPackDecodeResult.Success);

        // Name: dynamic index 62, the entry this insertion evicts (6 + 180 + 32 + 6 + 150 + 32 > 256).
        byte[] block = [0x40 | 62, .. StringLiteral(new string('2', 150))];
        session.Decode(block).ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe(["x-name: " + new string('2', 150)]);
        session.Decode("be").ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(["x-name: " + new string('2', 150)]);
    }

    [Fact]
    public void Entries_keep_their_bytes_while_the_table_moves_them_to_the_front_of_its_buffer()
    {
        using var session = new DecoderSession();
        var random = new Random(42);
        for (int i = 0; i < 500; i++)
        {
            string value = new('a', random.Next(0, 300));
            session.Decode(Literal(indexing: true, "x-n" + i, value + i)).ShouldBe(HPackDecodeResult.Success);

            // Every entry still in the table reads back as inserted (newest first).
            for (int index = 1; index <= session.Decoder.DynamicTableCount; index++)
            {
                session.Decode([.. IndexBytes(61 + index)]).ShouldBe(HPackDecodeResult.Success);
                session.Recording.Fields.ShouldHaveSingleItem().ShouldStartWith("x-n" + (i - index + 1) + ": ");
                session.Recording.Fields[0].ShouldEndWith((i - index + 1).ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
        }
    }

    internal static byte[] Literal(bool indexing, string name, string value) =>
        Literal(indexing, name, Encoding.Latin1.GetBytes(value));

    internal static byte[] Literal(bool indexing, string name, byte[] value) =>
        [indexing ? (byte)0x40 : (byte)0x00, .. StringLiteral(name), .. StringLiteral(value)];

    internal static byte[] StringLiteral(string text) => StringLiteral(Encoding.Latin1.GetBytes(text));

    internal static byte[] StringLiteral(byte[] bytes)
    {
        var length = new byte[8];
        int written = HPackInteger.Encode(bytes.Length, 7, 0, length);
        return [.. length.AsSpan(0, written), .. bytes];
    }

    internal static byte[] HuffmanStringLiteral(string text) => HuffmanString(HuffmanTests.Encode(Encoding.Latin1.GetBytes(text)));

    internal static byte[] HuffmanString(byte[] encoded)
    {
        var length = new byte[8];
        int written = HPackInteger.Encode(encoded.Length, 7, 0x80, length);
        return [.. length.AsSpan(0, written), .. encoded];
    }

    internal static byte[] IndexBytes(int index)
    {
        var bytes = new byte[8];
        int written = HPackInteger.Encode(index, 7, 0x80, bytes);
        return bytes.AsSpan(0, written).ToArray();
    }
}
