using System;
using System.Text;
using Falconet.HPack.Tests.Support;
using Falconet.Http.Http2.HPack;
using Falconet.Text;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>The Huffman code of RFC 7541 Appendix B through the generated tables: the RFC's strings, every symbol, every error.</summary>
public sealed class HuffmanTests
{
    public static TheoryData<string, string> RfcStrings { get; } = new()
    {
        { "www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff" },
        { "no-cache", "a8eb 1064 9cbf" },
        { "custom-key", "25a8 49e9 5ba9 7d7f" },
        { "custom-value", "25a8 49e9 5bb8 e8b4 bf" },
        { "302", "6402" },
        { "private", "aec3 771a 4b" },
        { "Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff" },
        { "https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3" },
        { "gzip", "9bd9 ab" },
        { "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1", "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07" },
    };

    [Theory]
    [MemberData(nameof(RfcStrings))]
    public void The_strings_of_Appendix_C_decode(string text, string hex)
    {
        Decode(Hex.Bytes(hex)).ShouldBe(text);
    }

    [Theory]
    [MemberData(nameof(RfcStrings))]
    public void The_strings_of_Appendix_C_encode_to_the_same_bytes(string text, string hex)
    {
        var encoded = new byte[HuffmanCodec.GetEncodedLength(text.AsSpan())];
        HuffmanCodec.Encode(text.AsSpan(), encoded).ShouldBe(encoded.Length);

        Hex.Text(encoded).ShouldBe(hex.Replace(" ", "", StringComparison.Ordinal));
    }

    [Fact]
    public void Every_octet_round_trips_alone_and_after_every_other()
    {
        for (int first = 0; first < 256; first++)
        {
            foreach (int second in new[] { -1, 0, 'a', 0x7F, 0xFF, first })
            {
                byte[] input = second < 0 ? [(byte)first] : [(byte)first, (byte)second];
                RoundTrip(input).ShouldBe(input, "octets " + first + ", " + second);
            }
        }
    }

    [Fact]
    public void Random_strings_of_every_length_up_to_300_round_trip_at_every_alignment()
    {
        var random = new Random(7541);
        for (int length = 0; length <= 300; length++)
        {
            byte[] input = new byte[length];
            random.NextBytes(input);
            RoundTrip(input).ShouldBe(input);

            // Mostly text: the codes of 5 to 8 bits, two per window.
            for (int i = 0; i < length; i++)
            {
                input[i] = (byte)random.Next(0x20, 0x7F);
            }

            RoundTrip(input).ShouldBe(input);
        }
    }

    [Fact]
    public void A_string_that_holds_EOS_is_invalid()
    {
        // 'a' (00011) then EOS (30 ones) then padding: 00011111 11111111 11111111 11111111 111 + 11111.
        HuffmanCodec.Decode(Hex.Bytes("1fff ffff ff"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);

        // EOS alone, at the start of a string (32 bits: EOS and two bits of padding).
        HuffmanCodec.Decode(Hex.Bytes("ffff ffff"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);
    }

    [Fact]
    public void Padding_of_more_than_seven_bits_is_invalid()
    {
        // "a" then a whole byte of ones: 8 + 3 bits of padding.
        HuffmanCodec.Decode(Hex.Bytes("1fff"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);

        // A byte of ones alone: padding of 8 bits with no symbol.
        HuffmanCodec.Decode(Hex.Bytes("ff"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);
    }

    [Fact]
    public void Padding_that_is_not_all_ones_is_invalid()
    {
        // "a" (00011) then 000 instead of 111.
        HuffmanCodec.Decode(Hex.Bytes("18"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);

        // "a" (00011) then 101.
        HuffmanCodec.Decode(Hex.Bytes("1d"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);
    }

    [Fact]
    public void Seven_bits_of_ones_are_valid_padding_and_an_empty_string_is_empty()
    {
        // "a" (00011) then 111: one byte.
        Decode(Hex.Bytes("1f")).ShouldBe("a");
        Decode([]).ShouldBe(string.Empty);
    }

    [Fact]
    public void A_code_longer_than_the_window_cut_off_by_the_end_is_invalid()
    {
        // The first 16 bits of the 30-bit code of 0x0A.
        HuffmanCodec.Decode(Hex.Bytes("ffff"), new byte[16]).ShouldBe(HuffmanCodec.Invalid);
    }

    [Fact]
    public void A_destination_too_small_gets_a_prefix_and_the_whole_length()
    {
        byte[] encoded = Hex.Bytes("f1e3 c2e5 f23a 6ba0 ab90 f4ff");
        var small = new byte[4];

        HuffmanCodec.Decode(encoded, small).ShouldBe("www.example.com".Length);
        Encoding.ASCII.GetString(small).ShouldBe("www.");
    }

    [Fact]
    public void A_destination_too_small_does_not_hide_an_error_further_on()
    {
        HuffmanCodec.Decode(Hex.Bytes("f1e3 c2e5 f23a 6ba0 ab90 f4ff ff"), new byte[4]).ShouldBe(HuffmanCodec.Invalid);
    }

    [Fact]
    public void Every_symbol_a_decoding_window_yields_may_appear_in_a_field_value_and_its_consumed_bits_fill_its_low_byte()
    {
        // What lets the decoder check a value's bytes on its bit-by-bit path only: the bytes a value may not hold (the
        // controls but HTAB, and DEL) all have codes longer than a window.
        ReadOnlySpan<uint> windows = HPackHuffman.DecodeWindows;
        int symbols = 0;
        for (int i = 0; i < windows.Length; i++)
        {
            uint entry = windows[i];
            (entry & 0xC0).ShouldBe(0u, $"window {i:X3}: the decoder reads the bits consumed as the entry's low byte");
            int count = (int)(entry >> HPackHuffman.CountShift) & 3;
            if (count is 1 or 2)
            {
                HttpCharacters.IsFieldValueChar((byte)(entry >> HPackHuffman.FirstShift)).ShouldBeTrue($"window {i:X3}");
                symbols++;
            }

            if (count == 2)
            {
                HttpCharacters.IsFieldValueChar((byte)(entry >> HPackHuffman.SecondShift)).ShouldBeTrue($"window {i:X3}");
            }
        }

        symbols.ShouldBeGreaterThan(windows.Length / 2);
    }

    [Theory]
    [InlineData("www.example.com", true)]
    [InlineData("", true)]
    [InlineData("a b\tc~^<>{}|\\`\u0080\u00e9\u00ff", true)] // codes longer than a window that are still value bytes
    [InlineData("a\rb", false)]
    [InlineData("a\nb", false)]
    [InlineData("\0", false)]
    [InlineData("text\u007F", false)]
    [InlineData("\u001F and more text after it", false)]
    public void Decoding_says_whether_every_byte_may_appear_in_a_field_value(string text, bool expected)
    {
        byte[] input = Encoding.Latin1.GetBytes(text);
        var output = new byte[input.Length + 8];

        HuffmanCodec.Decode(Encode(input), output, out bool fieldValueBytes).ShouldBe(input.Length);

        fieldValueBytes.ShouldBe(expected);
        output.AsSpan(0, input.Length).SequenceEqual(input).ShouldBeTrue();
    }

    [Fact]
    public void Decoding_each_byte_alone_says_what_HTTP_says_of_it_as_a_field_value_byte()
    {
        var output = new byte[8];
        for (int b = 0; b < 256; b++)
        {
            HuffmanCodec.Decode(Encode([(byte)b]), output, out bool fieldValueBytes).ShouldBe(1);

            output[0].ShouldBe((byte)b);
            fieldValueBytes.ShouldBe(HttpCharacters.IsFieldValueChar((byte)b), $"byte {b:X2}");
        }
    }

    private static string Decode(byte[] encoded)
    {
        var output = new byte[encoded.Length * 8 / 5 + 1];
        int length = HuffmanCodec.Decode(encoded, output);
        length.ShouldBeGreaterThanOrEqualTo(0);
        return Encoding.Latin1.GetString(output, 0, length);
    }

    internal static byte[] Encode(byte[] input)
    {
        var encoded = new byte[HuffmanCodec.GetEncodedLength(input)];
        HuffmanCodec.Encode(input, encoded).ShouldBe(encoded.Length);
        return encoded;
    }

    private static byte[] RoundTrip(byte[] input)
    {
        byte[] encoded = Encode(input);
        var output = new byte[input.Length + 8];
        int length = HuffmanCodec.Decode(encoded, output);
        length.ShouldBe(input.Length);
        return output.AsSpan(0, length).ToArray();
    }
}
