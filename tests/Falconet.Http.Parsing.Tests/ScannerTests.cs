using System;
using Falconet.Text;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>Both vector scanners agree with the scalar byte classes for every byte, at every position and length.</summary>
public sealed class ScannerTests
{
    private delegate int Scan(ReadOnlySpan<byte> span);

    public static TheoryData<string> Scanners => new() { "intrinsics", "searchvalues", "parser" };

    [Fact]
    public void Token_chars_are_exactly_the_RFC_9110_tchar_set()
    {
        for (int b = 0; b < 256; b++)
        {
            bool expected = char.IsAsciiLetterOrDigit((char)b) || "!#$%&'*+-.^_`|~".Contains((char)b, StringComparison.Ordinal);
            HttpCharacters.IsTokenChar((byte)b).ShouldBe(expected, $"byte 0x{b:X2}");
        }
    }

    [Fact]
    public void Field_value_chars_are_VCHAR_obs_text_SP_and_HTAB()
    {
        for (int b = 0; b < 256; b++)
        {
            bool expected = b == ' ' || b == '\t' || (b > 0x20 && b != 0x7F);
            HttpCharacters.IsFieldValueChar((byte)b).ShouldBe(expected, $"byte 0x{b:X2}");
        }
    }

    [Theory]
    [MemberData(nameof(Scanners))]
    public void IndexOfNonToken_finds_every_non_token_byte_at_every_position(string scanner)
    {
        Scan scan = NonToken(scanner);
        for (int length = 0; length <= 70; length++)
        {
            byte[] data = new byte[length];
            data.AsSpan().Fill((byte)'a');
            scan(data).ShouldBe(-1);
            for (int position = 0; position < length; position++)
            {
                for (int b = 0; b < 256; b++)
                {
                    data[position] = (byte)b;
                    int expected = HttpCharacters.IsTokenChar((byte)b) ? -1 : position;
                    scan(data).ShouldBe(expected, $"{scanner}: byte 0x{b:X2} at {position} of {length}");
                }

                data[position] = (byte)'a';
            }
        }
    }

    [Theory]
    [MemberData(nameof(Scanners))]
    public void IndexOfFieldValueEnd_finds_every_control_byte_at_every_position(string scanner)
    {
        Scan scan = FieldValueEnd(scanner);
        for (int length = 0; length <= 70; length++)
        {
            byte[] data = new byte[length];
            data.AsSpan().Fill(0xE9);
            scan(data).ShouldBe(-1);
            for (int position = 0; position < length; position++)
            {
                for (int b = 0; b < 256; b++)
                {
                    data[position] = (byte)b;
                    int expected = HttpCharacters.IsFieldValueChar((byte)b) ? -1 : position;
                    scan(data).ShouldBe(expected, $"{scanner}: byte 0x{b:X2} at {position} of {length}");
                }

                data[position] = 0xE9;
            }
        }
    }

    [Theory]
    [MemberData(nameof(Scanners))]
    public void Scans_return_the_first_of_several_matches(string scanner)
    {
        byte[] line = "Content-Type: text/plain\r\nHost: x\r\n"u8.ToArray();

        NonToken(scanner)(line).ShouldBe(12);
        FieldValueEnd(scanner)(line).ShouldBe(24);
    }

    private static Scan NonToken(string scanner) => scanner switch
    {
        "intrinsics" => IntrinsicsHttpScanner.IndexOfNonToken,
        "searchvalues" => SearchValuesHttpScanner.IndexOfNonToken,
        _ => HttpScanner.IndexOfNonToken,
    };

    private static Scan FieldValueEnd(string scanner) => scanner switch
    {
        "intrinsics" => IntrinsicsHttpScanner.IndexOfFieldValueEnd,
        "searchvalues" => SearchValuesHttpScanner.IndexOfFieldValueEnd,
        _ => HttpScanner.IndexOfFieldValueEnd,
    };
}
