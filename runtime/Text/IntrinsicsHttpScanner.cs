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
    // LowNibbleTable[lo] has bit h set when the byte (h << 4 | lo) is a tchar; tchars have high nibbles 2..7.
    // For example entry 0 is 0xE8: '0' (0x30), 'P' (0x50), '`' (0x60) and 'p' (0x70) are tchars, ' ' and '@' are not.
    // Written as constants so the JIT embeds them; ScannerTests prove the result for all 256 byte values.
    private static Vector128<byte> LowNibbleTable => Vector128.Create(
        (byte)0xE8, 0xFC, 0xF8, 0xFC, 0xFC, 0xFC, 0xFC, 0xFC, 0xF8, 0xF8, 0xF4, 0x54, 0xD0, 0x54, 0xF4, 0x70);

    // HighNibbleTable[h] = 1 << h for h in 2..7, 0 otherwise: control bytes and bytes >= 0x80 never match.
    private static Vector128<byte> HighNibbleTable => Vector128.Create(
        (byte)0, 0, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 0, 0, 0, 0, 0, 0, 0, 0);

    /// <summary>Returns the index of the first byte that is not an RFC 9110 tchar, or -1 when every byte is one.</summary>
    public static int IndexOfNonToken(ReadOnlySpan<byte> span)
    {
        ref byte start = ref MemoryMarshal.GetReference(span);
        nuint length = (nuint)span.Length;

        if (Avx2.IsSupported && length >= (nuint)Vector256<byte>.Count)
        {
            Vector256<byte> low = Vector256.Create(LowNibbleTable, LowNibbleTable);
            Vector256<byte> high = Vector256.Create(HighNibbleTable, HighNibbleTable);
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
                Vector128<byte> matches = Lookup(LowNibbleTable, lowNibbles) & Lookup(HighNibbleTable, highNibbles);
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

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Lookup(Vector128<byte> table, Vector128<byte> indices)
    {
        if (Ssse3.IsSupported)
        {
            return Ssse3.Shuffle(table, indices);
        }

        if (AdvSimd.Arm64.IsSupported)
        {
            return AdvSimd.Arm64.VectorTableLookup(table, indices);
        }

        throw new PlatformNotSupportedException();
    }
}
