using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace Falconet.Text;

/// <summary>Compares received bytes with a string made from such bytes (Latin-1: byte b is char b), widening as it reads.</summary>
/// <remarks>
/// The header collections compare each value with the string the previous request left, to reuse it. This compare is
/// exactly Latin-1 equality (a value with obs-text bytes matches its own decoded string) and needs no ASCII check, so
/// it is cheaper than <see cref="System.Text.Ascii.Equals(ReadOnlySpan{byte}, ReadOnlySpan{char})"/>; it is its own
/// method, compiled once with its helpers, whatever method it is called from.
/// </remarks>
internal static class Latin1
{
    /// <summary>True when every byte equals the char at its index; the two have the same length.</summary>
    public static bool Equals(ReadOnlySpan<byte> bytes, ReadOnlySpan<char> chars)
    {
        Debug.Assert(bytes.Length == chars.Length, "The caller compares lengths first.");
        ref byte source = ref MemoryMarshal.GetReference(bytes);
        ref ushort text = ref Unsafe.As<char, ushort>(ref MemoryMarshal.GetReference(chars));
        nuint length = (nuint)bytes.Length;

        // Each loop ends with the last whole vector, overlapping the one before, so no tail is left.
        if (Vector512.IsHardwareAccelerated && length >= 64)
        {
            nuint last = length - 64;
            for (nuint i = 0; ; i = Math.Min(i + 64, last))
            {
                Vector512<byte> value = Vector512.LoadUnsafe(ref source, i);
                Vector512<ushort> differences = (Vector512.WidenLower(value) ^ Vector512.LoadUnsafe(ref text, i))
                    | (Vector512.WidenUpper(value) ^ Vector512.LoadUnsafe(ref text, i + 32));
                if (differences != Vector512<ushort>.Zero)
                {
                    return false;
                }

                if (i == last)
                {
                    return true;
                }
            }
        }

        if (Avx512BW.IsSupported && Vector512.IsHardwareAccelerated && length >= 32)
        {
            nuint last = length - 32;
            for (nuint i = 0; ; i = Math.Min(i + 32, last))
            {
                if (Avx512BW.ConvertToVector512UInt16(Vector256.LoadUnsafe(ref source, i)) != Vector512.LoadUnsafe(ref text, i))
                {
                    return false;
                }

                if (i == last)
                {
                    return true;
                }
            }
        }

        if (Avx2.IsSupported && length >= 16)
        {
            nuint last = length - 16;
            for (nuint i = 0; ; i = Math.Min(i + 16, last))
            {
                if (Avx2.ConvertToVector256Int16(Vector128.LoadUnsafe(ref source, i)).AsUInt16() != Vector256.LoadUnsafe(ref text, i))
                {
                    return false;
                }

                if (i == last)
                {
                    return true;
                }
            }
        }

        if (Vector128.IsHardwareAccelerated && length >= 8)
        {
            nuint last = length - 8;
            for (nuint i = 0; ; i = Math.Min(i + 8, last))
            {
                if (Vector128.WidenLower(Vector64.LoadUnsafe(ref source, i).ToVector128Unsafe()) != Vector128.LoadUnsafe(ref text, i))
                {
                    return false;
                }

                if (i == last)
                {
                    return true;
                }
            }
        }

        for (nuint i = 0; i < length; i++)
        {
            if (Unsafe.Add(ref source, i) != Unsafe.Add(ref text, i))
            {
                return false;
            }
        }

        return true;
    }
}
