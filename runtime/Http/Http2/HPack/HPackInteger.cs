using System;
using System.Runtime.CompilerServices;

namespace Falconet.Http.Http2.HPack;

/// <summary>HPACK's prefixed integers (RFC 7541 section 5.1): a value in the low bits of the first byte, then 7 bits per byte.</summary>
internal static class HPackInteger
{
    /// <summary>The most continuation bytes a value may take: 5 carry 35 bits, enough for any <see cref="int"/>.</summary>
    public const int MaxContinuationBytes = 5;

    /// <summary>The outcome of <see cref="TryDecode"/>.</summary>
    public enum Result
    {
        /// <summary>A value was read.</summary>
        Done,

        /// <summary>The input ends inside the integer.</summary>
        Truncated,

        /// <summary>The value exceeds <see cref="int.MaxValue"/> or takes more than <see cref="MaxContinuationBytes"/> continuation bytes.</summary>
        Overflow,
    }

    /// <summary>Reads the integer that starts at <paramref name="position"/> with a prefix of <paramref name="prefixBits"/> bits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Result TryDecode(ReadOnlySpan<byte> source, ref int position, int prefixBits, out int value)
    {
        int mask = (1 << prefixBits) - 1;
        value = source[position] & mask;
        position++;
        return value < mask ? Result.Done : DecodeContinuation(source, ref position, ref value);
    }

    /// <summary>The number of bytes <paramref name="value"/> takes with a prefix of <paramref name="prefixBits"/> bits.</summary>
    public static int GetEncodedLength(int value, int prefixBits)
    {
        int mask = (1 << prefixBits) - 1;
        if (value < mask)
        {
            return 1;
        }

        int length = 2;
        for (uint rest = (uint)(value - mask); rest >= 0x80; rest >>= 7)
        {
            length++;
        }

        return length;
    }

    /// <summary>
    /// Writes <paramref name="value"/> with a prefix of <paramref name="prefixBits"/> bits; the bits above the prefix in the
    /// first byte are <paramref name="firstByteFlags"/>. Returns the bytes written.
    /// </summary>
    public static int Encode(int value, int prefixBits, byte firstByteFlags, Span<byte> destination)
    {
        int mask = (1 << prefixBits) - 1;
        if (value < mask)
        {
            destination[0] = (byte)(firstByteFlags | value);
            return 1;
        }

        destination[0] = (byte)(firstByteFlags | mask);
        int written = 1;
        uint rest = (uint)(value - mask);
        while (rest >= 0x80)
        {
            destination[written++] = (byte)(rest | 0x80);
            rest >>= 7;
        }

        destination[written++] = (byte)rest;
        return written;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Result DecodeContinuation(ReadOnlySpan<byte> source, ref int position, ref int value)
    {
        ulong total = (ulong)value;
        for (int i = 0; i < MaxContinuationBytes; i++)
        {
            if (position >= source.Length)
            {
                return Result.Truncated;
            }

            byte next = source[position++];
            total += (ulong)(next & 0x7F) << (7 * i);
            if ((next & 0x80) == 0)
            {
                if (total > int.MaxValue)
                {
                    return Result.Overflow;
                }

                value = (int)total;
                return Result.Done;
            }
        }

        return Result.Overflow;
    }
}
