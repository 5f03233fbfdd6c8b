using System;
using System.Buffers.Binary;
using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Falconet.Http;

/// <summary>The unaligned little-endian reads the generated method, version and header-name matchers compare with their masks.</summary>
/// <remarks>
/// Masks and values are planned little-endian (the first byte is the lowest). On a big-endian machine the loaded
/// integer is byte-swapped so the same constants apply; <see cref="BitConverter.IsLittleEndian"/> is a JIT constant,
/// so a little-endian machine pays nothing. The caller has checked the length: there is no bounds check here.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class MatcherReads
{
    /// <summary>8 bytes at <paramref name="offset"/>, the first one lowest.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Read64(ref byte source, int offset)
    {
        ulong value = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref source, offset));
        return BitConverter.IsLittleEndian ? value : BinaryPrimitives.ReverseEndianness(value);
    }

    /// <summary>4 bytes at <paramref name="offset"/>, the first one lowest.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint Read32(ref byte source, int offset)
    {
        uint value = Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref source, offset));
        return BitConverter.IsLittleEndian ? value : BinaryPrimitives.ReverseEndianness(value);
    }

    /// <summary>2 bytes at <paramref name="offset"/>, the first one lowest.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ushort Read16(ref byte source, int offset)
    {
        ushort value = Unsafe.ReadUnaligned<ushort>(ref Unsafe.Add(ref source, offset));
        return BitConverter.IsLittleEndian ? value : BinaryPrimitives.ReverseEndianness(value);
    }

    /// <summary>The byte at <paramref name="offset"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte Read8(ref byte source, int offset) => Unsafe.Add(ref source, offset);
}
