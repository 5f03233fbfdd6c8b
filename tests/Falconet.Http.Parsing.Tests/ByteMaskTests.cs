using System;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;
using Falconet.Text;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>Every form of the 64-byte classification (512, 256, 128-bit and scalar) agrees with the scalar byte classes, for every byte at every position.</summary>
public sealed class ByteMaskTests
{
    private delegate ulong Classify(ref byte source);

    private delegate ulong ClassifyTarget(ref byte source, out ulong fragment, out ulong query);

    /// <summary>The forms this machine can run; the scalar one runs everywhere.</summary>
    public static TheoryData<string> Forms
    {
        get
        {
            var forms = new TheoryData<string> { "scalar", "dispatched" };
            if (HttpByteMasks.UsesLookup512)
            {
                forms.Add("512");
            }

            if (Avx2.IsSupported)
            {
                forms.Add("256");
            }

            if (Ssse3.IsSupported || AdvSimd.Arm64.IsSupported)
            {
                forms.Add("128");
            }

            return forms;
        }
    }

    [Theory]
    [MemberData(nameof(Forms))]
    public void NonToken_marks_exactly_the_bytes_that_are_not_tchar(string form)
        => AssertMarks(NonToken(form), HttpCharacters.IsTokenChar, neutral: (byte)'a', marksMatching: false);

    [Theory]
    [MemberData(nameof(Forms))]
    public void NonFieldValue_marks_exactly_CTLs_but_HTAB_and_DEL(string form)
        => AssertMarks(NonFieldValue(form), HttpCharacters.IsFieldValueChar, neutral: 0xE9, marksMatching: false);

    [Fact]
    public void FieldLine_gives_both_masks_of_the_other_two()
    {
        AssertMarks((ref byte source) => HttpByteMasks.FieldLine(ref source, out _), HttpCharacters.IsFieldValueChar, neutral: 0xE9, marksMatching: false);
        AssertMarks((ref byte source) => Tokens(ref source), HttpCharacters.IsTokenChar, neutral: (byte)'a', marksMatching: false);
        if (HttpByteMasks.UsesLookup512)
        {
            AssertMarks((ref byte source) => HttpByteMasks.FieldLine512(ref source, out _), HttpCharacters.IsFieldValueChar, neutral: 0xE9, marksMatching: false);
            AssertMarks((ref byte source) => Tokens512(ref source), HttpCharacters.IsTokenChar, neutral: (byte)'a', marksMatching: false);
        }

        static ulong Tokens(ref byte source)
        {
            HttpByteMasks.FieldLine(ref source, out ulong nonToken);
            return nonToken;
        }

        static ulong Tokens512(ref byte source)
        {
            HttpByteMasks.FieldLine512(ref source, out ulong nonToken);
            return nonToken;
        }
    }

    [Theory]
    [MemberData(nameof(Forms))]
    public void RequestTarget_marks_bytes_that_are_not_VCHAR_and_each_fragment_and_query_sign(string form)
    {
        ClassifyTarget classify = RequestTarget(form);
        AssertMarks((ref byte source) => classify(ref source, out _, out _), HttpCharacters.IsVisibleAscii, neutral: (byte)'a', marksMatching: false);
        AssertMarks((ref byte source) => Fragment(classify, ref source), b => b == (byte)'#', neutral: (byte)'a', marksMatching: true);
        AssertMarks((ref byte source) => Query(classify, ref source), b => b == (byte)'?', neutral: (byte)'a', marksMatching: true);
    }

    [Fact]
    public void MayEndFieldValue_is_true_exactly_when_two_chunks_hold_a_CTL_HTAB_included_or_DEL()
    {
        byte[] chunks = new byte[2 * HttpByteMasks.Width];
        chunks.AsSpan().Fill(0xE9);
        HttpByteMasks.MayEndFieldValue(ref chunks[0]).ShouldBeFalse();
        HttpByteMasks.MayEndFieldValueByMasks(ref chunks[0]).ShouldBeFalse();
        for (int position = 0; position < chunks.Length; position++)
        {
            for (int b = 0; b < 256; b++)
            {
                chunks[position] = (byte)b;
                bool expected = b < 0x20 || b == 0x7F;
                HttpByteMasks.MayEndFieldValue(ref chunks[0]).ShouldBe(expected, $"byte 0x{b:X2} at {position}");
                HttpByteMasks.MayEndFieldValue256(ref chunks[0]).ShouldBe(expected, $"256: byte 0x{b:X2} at {position}");
                HttpByteMasks.MayEndFieldValueByMasks(ref chunks[0]).ShouldBe(expected, $"masks: byte 0x{b:X2} at {position}");
            }

            chunks[position] = 0xE9;
        }
    }

    [Fact]
    public void A_mask_describes_every_byte_of_a_window_of_field_lines_at_once()
    {
        byte[] window = new byte[HttpByteMasks.Width];
        window.AsSpan().Fill((byte)'z');
        "Host: a\r\nX-Y: \tb \x7F\r\n"u8.CopyTo(window);

        HttpByteMasks.NonToken(ref window[0]).ShouldBe(Bits(4, 5, 7, 8, 12, 13, 14, 16, 17, 18, 19));
        HttpByteMasks.NonFieldValue(ref window[0]).ShouldBe(Bits(7, 8, 17, 18, 19));
    }

    [Fact]
    public void A_mask_describes_every_byte_of_a_request_line_at_once()
    {
        byte[] window = new byte[HttpByteMasks.Width];
        window.AsSpan().Fill((byte)'z');
        "GET /a?b#c HTTP/1.1\r\n"u8.CopyTo(window);

        HttpByteMasks.RequestTarget(ref window[0], out ulong fragment, out ulong query).ShouldBe(Bits(3, 10, 19, 20));
        fragment.ShouldBe(Bits(8));
        query.ShouldBe(Bits(6));
    }

    private static ulong Bits(params int[] positions)
    {
        ulong mask = 0;
        foreach (int position in positions)
        {
            mask |= 1UL << position;
        }

        return mask;
    }

    private static void AssertMarks(Classify classify, Func<byte, bool> inClass, byte neutral, bool marksMatching)
    {
        byte[] window = new byte[HttpByteMasks.Width];
        window.AsSpan().Fill(neutral);
        classify(ref window[0]).ShouldBe(0UL);
        for (int position = 0; position < window.Length; position++)
        {
            for (int b = 0; b < 256; b++)
            {
                window[position] = (byte)b;
                bool marked = inClass((byte)b) == marksMatching;
                ulong expected = marked ? 1UL << position : 0;
                ulong actual = classify(ref window[0]);
                actual.ShouldBe(expected, $"byte 0x{b:X2} at {position}");
            }

            window[position] = neutral;
        }
    }

    private static ulong Fragment(ClassifyTarget classify, ref byte source)
    {
        classify(ref source, out ulong fragment, out _);
        return fragment;
    }

    private static ulong Query(ClassifyTarget classify, ref byte source)
    {
        classify(ref source, out _, out ulong query);
        return query;
    }

    private static Classify NonToken(string form) => form switch
    {
        "512" => HttpByteMasks.NonToken512,
        "256" => HttpByteMasks.NonToken256,
        "128" => HttpByteMasks.NonToken128,
        "scalar" => HttpByteMasks.NonTokenScalar,
        _ => HttpByteMasks.NonToken,
    };

    private static Classify NonFieldValue(string form) => form switch
    {
        "512" => HttpByteMasks.NonFieldValue512,
        "256" => HttpByteMasks.NonFieldValue256,
        "128" => HttpByteMasks.NonFieldValue128,
        "scalar" => HttpByteMasks.NonFieldValueScalar,
        _ => HttpByteMasks.NonFieldValue,
    };

    private static ClassifyTarget RequestTarget(string form) => form switch
    {
        "512" => HttpByteMasks.RequestTarget512,
        "256" => HttpByteMasks.RequestTarget256,
        "128" => HttpByteMasks.RequestTarget128,
        "scalar" => HttpByteMasks.RequestTargetScalar,
        _ => HttpByteMasks.RequestTarget,
    };
}
