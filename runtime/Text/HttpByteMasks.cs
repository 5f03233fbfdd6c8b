using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace Falconet.Text;

/// <summary>Classifies 64 bytes at once into a bit mask (bit i describes byte i), so the parser walks lines with bit operations.</summary>
/// <remarks>
/// With AVX-512 VBMI one table lookup (<c>vpermi2b</c> over the 128 ASCII classes of <see cref="Classes"/>) classifies
/// all 64 bytes for every class at once; elsewhere two 256-bit or four 128-bit loads use a nibble lookup for tchar and
/// compares for the rest, and a machine without vectors loops over the table. The results are identical:
/// <c>ByteMaskTests</c> checks every form against <see cref="HttpCharacters"/> for every byte value at every position.
/// Every method reads exactly <see cref="Width"/> bytes from <c>source</c>: the caller guarantees they are readable.
/// </remarks>
internal static class HttpByteMasks
{
    /// <summary>The bytes one mask describes.</summary>
    public const int Width = 64;

    private const byte TokenClass = 0x01;
    private const byte NonFieldValueClass = 0x02;
    private const byte NonVisibleClass = 0x04;
    private const byte FragmentClass = 0x08;
    private const byte QueryClass = 0x10;

    /// <summary>True when this machine classifies 64 bytes with one 512-bit table lookup.</summary>
    internal static bool UsesLookup512 => Vector512.IsHardwareAccelerated && Avx512Vbmi.IsSupported;

    /// <summary>
    /// The classes of the 128 ASCII bytes, one flag per class (tchar, not a field-value byte, not a VCHAR, '#', '?');
    /// every byte from 0x80 is obs-text: no tchar, a field-value byte, not a VCHAR.
    /// </summary>
    private static ReadOnlySpan<byte> Classes =>
        [
            0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x04, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, // 0x00 to 0x0F: CTLs; HTAB is a value byte
            0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, // 0x10 to 0x1F: CTLs
            0x04, 0x01, 0x00, 0x09, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x01, 0x01, 0x00, 0x01, 0x01, 0x00, // 0x20 to 0x2F: SP ! " # $ % & ' ( ) * + , - . /
            0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, // 0x30 to 0x3F: digits : ; < = > ?
            0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, // 0x40 to 0x4F: @ A to O
            0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x01, // 0x50 to 0x5F: P to Z [ \ ] ^ _
            0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, // 0x60 to 0x6F: ` a to o
            0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x01, 0x00, 0x01, 0x06, // 0x70 to 0x7F: p to z { | } ~ DEL
        ];

    /// <summary>Bit i set: byte i is not an RFC 9110 tchar.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong NonToken(ref byte source)
    {
        if (UsesLookup512)
        {
            return NonToken512(ref source);
        }

        if (Avx2.IsSupported)
        {
            return NonToken256(ref source);
        }

        if (Ssse3.IsSupported || AdvSimd.Arm64.IsSupported)
        {
            return NonToken128(ref source);
        }

        return NonTokenScalar(ref source);
    }

    /// <summary>Bit i set: byte i cannot appear in a field value (a CTL other than HTAB, or DEL); CR and LF are such bytes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong NonFieldValue(ref byte source)
    {
        if (UsesLookup512)
        {
            return NonFieldValue512(ref source);
        }

        if (Vector256.IsHardwareAccelerated)
        {
            return NonFieldValue256(ref source);
        }

        if (Vector128.IsHardwareAccelerated)
        {
            return NonFieldValue128(ref source);
        }

        return NonFieldValueScalar(ref source);
    }

    /// <summary>
    /// False when none of the 128 bytes (two masks' worth) is a CTL, HTAB included, or DEL: no field value ends there, so a
    /// long value is passed over two chunks at a time. True says only that one of those bytes is there.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool MayEndFieldValue(ref byte source)
    {
        if (Vector512.IsHardwareAccelerated)
        {
            Vector512<byte> first = Vector512.LoadUnsafe(ref source);
            Vector512<byte> second = Vector512.LoadUnsafe(ref source, 64);
            Vector512<byte> control = Vector512.Create((byte)0x20);
            Vector512<byte> delete = Vector512.Create((byte)0x7F);
            return (Vector512.LessThan(first, control) | Vector512.Equals(first, delete)
                | Vector512.LessThan(second, control) | Vector512.Equals(second, delete)) != Vector512<byte>.Zero;
        }

        return Vector256.IsHardwareAccelerated ? MayEndFieldValue256(ref source) : MayEndFieldValueByMasks(ref source);
    }

    /// <summary>The 256-bit form of <see cref="MayEndFieldValue"/>: four vectors, two compares each.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool MayEndFieldValue256(ref byte source)
    {
        Vector256<byte> control = Vector256.Create((byte)0x20);
        Vector256<byte> delete = Vector256.Create((byte)0x7F);
        Vector256<byte> found = Vector256<byte>.Zero;
        for (nuint offset = 0; offset < 2 * Width; offset += 32)
        {
            Vector256<byte> value = Vector256.LoadUnsafe(ref source, offset);
            found |= Vector256.LessThan(value, control) | Vector256.Equals(value, delete);
        }

        return found != Vector256<byte>.Zero;
    }

    /// <summary>The form of <see cref="MayEndFieldValue"/> without 512 or 256-bit vectors: the value masks, and a search for HTAB.</summary>
    internal static bool MayEndFieldValueByMasks(ref byte source)
        => (NonFieldValue(ref source) | NonFieldValue(ref Unsafe.Add(ref source, Width))) != 0
            || MemoryMarshal.CreateReadOnlySpan(ref source, 2 * Width).Contains((byte)'\t');

    /// <summary>Both masks of a header line at once: the result is <see cref="NonFieldValue"/>, <paramref name="nonToken"/> is <see cref="NonToken"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong FieldLine(ref byte source, out ulong nonToken)
    {
        if (UsesLookup512)
        {
            return FieldLine512(ref source, out nonToken);
        }

        nonToken = NonToken(ref source);
        return NonFieldValue(ref source);
    }

    /// <summary>
    /// Bit i set: byte i is not a VCHAR (0x21 to 0x7E), so it ends a request-target; <paramref name="fragment"/> marks
    /// '#' and <paramref name="query"/> marks '?'.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong RequestTarget(ref byte source, out ulong fragment, out ulong query)
    {
        if (UsesLookup512)
        {
            return RequestTarget512(ref source, out fragment, out query);
        }

        if (Vector256.IsHardwareAccelerated)
        {
            return RequestTarget256(ref source, out fragment, out query);
        }

        if (Vector128.IsHardwareAccelerated)
        {
            return RequestTarget128(ref source, out fragment, out query);
        }

        return RequestTargetScalar(ref source, out fragment, out query);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonToken512(ref byte source)
    {
        Vector512<byte> value = Vector512.LoadUnsafe(ref source);
        return LacksClass(Lookup512(value), TokenClass) | value.ExtractMostSignificantBits();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonFieldValue512(ref byte source)
    {
        Vector512<byte> value = Vector512.LoadUnsafe(ref source);
        return ~LacksClass(Lookup512(value), NonFieldValueClass) & ~value.ExtractMostSignificantBits();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong FieldLine512(ref byte source, out ulong nonToken)
    {
        Vector512<byte> value = Vector512.LoadUnsafe(ref source);
        nonToken = LacksClass(Lookup512(value), TokenClass) | value.ExtractMostSignificantBits();
        return ((Vector512.LessThan(value, Vector512.Create((byte)0x20)) & ~Vector512.Equals(value, Vector512.Create((byte)'\t')))
            | Vector512.Equals(value, Vector512.Create((byte)0x7F))).ExtractMostSignificantBits();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong RequestTarget512(ref byte source, out ulong fragment, out ulong query)
    {
        Vector512<byte> value = Vector512.LoadUnsafe(ref source);
        Vector512<byte> classes = Lookup512(value);
        ulong high = value.ExtractMostSignificantBits();
        fragment = ~LacksClass(classes, FragmentClass) & ~high;
        query = ~LacksClass(classes, QueryClass) & ~high;
        return ~LacksClass(classes, NonVisibleClass) | high;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonToken256(ref byte source)
        => NonTokenOf(Vector256.LoadUnsafe(ref source)) | ((ulong)NonTokenOf(Vector256.LoadUnsafe(ref source, 32)) << 32);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonFieldValue256(ref byte source)
        => NonFieldValueOf(Vector256.LoadUnsafe(ref source)) | ((ulong)NonFieldValueOf(Vector256.LoadUnsafe(ref source, 32)) << 32);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong RequestTarget256(ref byte source, out ulong fragment, out ulong query)
    {
        Vector256<byte> first = Vector256.LoadUnsafe(ref source);
        Vector256<byte> second = Vector256.LoadUnsafe(ref source, 32);
        fragment = Vector256.Equals(first, Vector256.Create((byte)'#')).ExtractMostSignificantBits()
            | ((ulong)Vector256.Equals(second, Vector256.Create((byte)'#')).ExtractMostSignificantBits() << 32);
        query = Vector256.Equals(first, Vector256.Create((byte)'?')).ExtractMostSignificantBits()
            | ((ulong)Vector256.Equals(second, Vector256.Create((byte)'?')).ExtractMostSignificantBits() << 32);
        return NonVisibleOf(first) | ((ulong)NonVisibleOf(second) << 32);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonToken128(ref byte source)
    {
        ulong nonToken = 0;
        for (int quarter = 0; quarter < 4; quarter++)
        {
            nonToken |= (ulong)NonTokenOf(Vector128.LoadUnsafe(ref source, (nuint)(quarter * 16))) << (quarter * 16);
        }

        return nonToken;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong NonFieldValue128(ref byte source)
    {
        ulong nonValue = 0;
        for (int quarter = 0; quarter < 4; quarter++)
        {
            nonValue |= (ulong)NonFieldValueOf(Vector128.LoadUnsafe(ref source, (nuint)(quarter * 16))) << (quarter * 16);
        }

        return nonValue;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong RequestTarget128(ref byte source, out ulong fragment, out ulong query)
    {
        ulong nonVisible = 0;
        fragment = 0;
        query = 0;
        for (int quarter = 0; quarter < 4; quarter++)
        {
            Vector128<byte> value = Vector128.LoadUnsafe(ref source, (nuint)(quarter * 16));
            int shift = quarter * 16;
            fragment |= (ulong)Vector128.Equals(value, Vector128.Create((byte)'#')).ExtractMostSignificantBits() << shift;
            query |= (ulong)Vector128.Equals(value, Vector128.Create((byte)'?')).ExtractMostSignificantBits() << shift;
            nonVisible |= (ulong)Vector128.GreaterThan(value - Vector128.Create((byte)0x21), Vector128.Create((byte)(0x7E - 0x21)))
                .ExtractMostSignificantBits() << shift;
        }

        return nonVisible;
    }

    internal static ulong NonTokenScalar(ref byte source) => ScalarMask(ref source, TokenClass) ^ ulong.MaxValue;

    internal static ulong NonFieldValueScalar(ref byte source) => ScalarMask(ref source, NonFieldValueClass);

    internal static ulong RequestTargetScalar(ref byte source, out ulong fragment, out ulong query)
    {
        fragment = ScalarMask(ref source, FragmentClass);
        query = ScalarMask(ref source, QueryClass);
        return ScalarMask(ref source, NonVisibleClass);
    }

    /// <summary>The class flags of every byte by its low 7 bits (the callers account for bytes from 0x80 with their top bit).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector512<byte> Lookup512(Vector512<byte> value)
    {
        ref byte classes = ref MemoryMarshal.GetReference(Classes);
        return Avx512Vbmi.PermuteVar64x8x2(Vector512.LoadUnsafe(ref classes), value, Vector512.LoadUnsafe(ref classes, 64));
    }

    /// <summary>Bit i set when byte i of <paramref name="classes"/> does not have the flag <paramref name="flag"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong LacksClass(Vector512<byte> classes, byte flag)
        => Vector512.Equals(classes & Vector512.Create(flag), Vector512<byte>.Zero).ExtractMostSignificantBits();

    /// <summary>Bit i set when byte i has the class <paramref name="flag"/>: the table for ASCII, obs-text's classes from 0x80.</summary>
    private static ulong ScalarMask(ref byte source, byte flag)
    {
        ulong mask = 0;
        for (int i = 0; i < Width; i++)
        {
            byte value = Unsafe.Add(ref source, i);
            int classes = value < 0x80 ? Classes[value] : NonVisibleClass;
            mask |= (classes & flag) != 0 ? 1UL << i : 0;
        }

        return mask;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NonFieldValueOf(Vector256<byte> value)
        => ((Vector256.LessThan(value, Vector256.Create((byte)0x20)) & ~Vector256.Equals(value, Vector256.Create((byte)'\t')))
            | Vector256.Equals(value, Vector256.Create((byte)0x7F))).ExtractMostSignificantBits();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NonFieldValueOf(Vector128<byte> value)
        => ((Vector128.LessThan(value, Vector128.Create((byte)0x20)) & ~Vector128.Equals(value, Vector128.Create((byte)'\t')))
            | Vector128.Equals(value, Vector128.Create((byte)0x7F))).ExtractMostSignificantBits();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NonVisibleOf(Vector256<byte> value)
        => Vector256.GreaterThan(value - Vector256.Create((byte)0x21), Vector256.Create((byte)(0x7E - 0x21))).ExtractMostSignificantBits();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NonTokenOf(Vector256<byte> value)
    {
        Vector256<byte> nibble = Vector256.Create((byte)0x0F);
        Vector256<byte> low = Avx2.Shuffle(Vector256.Create(TokenNibbles.Low), value & nibble);
        Vector256<byte> high = Avx2.Shuffle(Vector256.Create(TokenNibbles.High), Vector256.ShiftRightLogical(value.AsUInt16(), 4).AsByte() & nibble);
        return Vector256.Equals(low & high, Vector256<byte>.Zero).ExtractMostSignificantBits();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NonTokenOf(Vector128<byte> value)
    {
        Vector128<byte> nibble = Vector128.Create((byte)0x0F);
        Vector128<byte> low = TokenNibbles.Lookup(TokenNibbles.Low, value & nibble);
        Vector128<byte> high = TokenNibbles.Lookup(TokenNibbles.High, Vector128.ShiftRightLogical(value.AsUInt16(), 4).AsByte() & nibble);
        return Vector128.Equals(low & high, Vector128<byte>.Zero).ExtractMostSignificantBits();
    }
}
