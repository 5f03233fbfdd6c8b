using System;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace Falconet.Text;

/// <summary>Hand-written <see cref="System.Runtime.Intrinsics"/> scans for header delimiters and byte-class validation.</summary>
/// <remarks>
/// Token validation classifies 16 or 32 bytes at once with a nibble lookup: the low nibble selects a set of
/// allowed high nibbles from one table, the high nibble selects its own bit from another, and a byte is a tchar
/// exactly when the two lookups share a bit. Field-value ends are found with unsigned compares. The last partial
/// vector is handled by re-reading the final full vector (overlapping), so short tails need no scalar loop.
/// </remarks>
public static class IntrinsicsHttpScanner
{
    /// <summary>Returns the index of the first byte that is not an RFC 9110 tchar, or -1 when every byte is one.</summary>
    public static int IndexOfNonToken(ReadOnlySpan<byte> span)
    {
        ref byte start = ref MemoryMarshal.GetReference(span);
        nuint length = (nuint)span.Length;

        if (Avx2.IsSupported && length >= (nuint)Vector256<byte>.Count)
        {
            Vector256<byte> low = Vector256.Create(TokenNibbles.Low);
            Vector256<byte> high = Vector256.Create(TokenNibbles.High);
            nuint last = length - (nuint)Vector256<byte>.Count;
            nuint offset = 0;
            while (true)
            {
                Vector256<byte> value = Vector256.LoadUnsafe(ref start, offset);
                Vector256<byte> lowNibbles = value & Vector256.Create((byte)0x0F);
                Vector256<byte> highNibbles = Vector256.ShiftRightLogical(value, 4) & Vector256.Create((byte)0x0F);
                Vector256<byte> matches = Avx2.Shuffle(low, lowNibbles) & Avx2.Shuffle(high, highNibbles);
                uint invalid = Vector256.Equals(matches, Vector256<byte>.Zero).ExtractMostSignificantBits();
                if (invalid != 0)
                {
                    return (int)(offset + (nuint)BitOperations.TrailingZeroCount(invalid));
                }

                if (offset == last)
                {
                    return -1;
                }

                offset = Math.Min(offset + (nuint)Vector256<byte>.Count, last);
            }
        }

        if ((Ssse3.IsSupported || AdvSimd.Arm64.IsSupported) && length >= (nuint)Vector128<byte>.Count)
        {
            nuint last = length - (nuint)Vector128<byte>.Count;
            nuint offset = 0;
            while (true)
            {
                Vector128<byte> value = Vector128.LoadUnsafe(ref start, offset);
                Vector128<byte> lowNibbles = value & Vector128.Create((byte)0x0F);
                Vector128<byte> highNibbles = Vector128.ShiftRightLogical(value, 4) & Vector128.Create((byte)0x0F);
                Vector128<byte> matches = TokenNibbles.Lookup(TokenNibbles.Low, lowNibbles) & TokenNibbles.Lookup(TokenNibbles.High, highNibbles);
                uint invalid = Vector128.Equals(matches, Vector128<byte>.Zero).ExtractMostSignificantBits();
                if (invalid != 0)
                {
                    return (int)(offset + (nuint)BitOperations.TrailingZeroCount(invalid));
                }

                if (offset == last)
                {
                    return -1;
                }

                offset = Math.Min(offset + (nuint)Vector128<byte>.Count, last);
            }
        }

        for (int i = 0; i < span.Length; i++)
        {
            if (!HttpCharacters.IsTokenChar(span[i]))
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>Returns the index of the first byte that cannot appear in a field value (a CTL other than HTAB, or DEL), or -1.</summary>
    /// <remarks>CR and LF are such bytes, so the result is where a well-formed header line ends.</remarks>
    public static int IndexOfFieldValueEnd(ReadOnlySpan<byte> span)
    {
        ref byte start = ref MemoryMarshal.GetReference(span);
        nuint length = (nuint)span.Length;

        if (Vector256.IsHardwareAccelerated && length >= (nuint)Vector256<byte>.Count)
        {
            nuint last = length - (nuint)Vector256<byte>.Count;
            nuint offset = 0;
            while (true)
            {
                Vector256<byte> value = Vector256.LoadUnsafe(ref start, offset);
                Vector256<byte> control = Vector256.LessThan(value, Vector256.Create((byte)0x20))
                    & ~Vector256.Equals(value, Vector256.Create((byte)'\t'));
                uint invalid = (control | Vector256.Equals(value, Vector256.Create((byte)0x7F))).ExtractMostSignificantBits();
                if (invalid != 0)
                {
                    return (int)(offset + (nuint)BitOperations.TrailingZeroCount(invalid));
                }

                if (offset == last)
                {
                    return -1;
                }

                offset = Math.Min(offset + (nuint)Vector256<byte>.Count, last);
            }
        }

        if (Vector128.IsHardwareAccelerated && length >= (nuint)Vector128<byte>.Count)
        {
            nuint last = length - (nuint)Vector128<byte>.Count;
            nuint offset = 0;
            while (true)
            {
                Vector128<byte> value = Vector128.LoadUnsafe(ref start, offset);
                Vector128<byte> control = Vector128.LessThan(value, Vector128.Create((byte)0x20))
                    & ~Vector128.Equals(value, Vector128.Create((byte)'\t'));
                uint invalid = (control | Vector128.Equals(value, Vector128.Create((byte)0x7F))).ExtractMostSignificantBits();
                if (invalid != 0)
                {
                    return (int)(offset + (nuint)BitOperations.TrailingZeroCount(invalid));
                }

                if (offset == last)
                {
                    return -1;
                }

                offset = Math.Min(offset + (nuint)Vector128<byte>.Count, last);
            }
        }

        for (int i = 0; i < span.Length; i++)
        {
            if (!HttpCharacters.IsFieldValueChar(span[i]))
            {
                return i;
            }
        }

        return -1;
    }
}
