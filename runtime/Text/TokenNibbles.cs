using System;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace Falconet.Text;

/// <summary>
/// The two 16-entry tables that classify a byte as an RFC 9110 tchar with two shuffles: the low nibble selects the
/// allowed high nibbles from <see cref="Low"/>, the high nibble selects its own bit from <see cref="High"/>, and the
/// byte is a tchar exactly when the two share a bit.
/// </summary>
internal static class TokenNibbles
{
    // Low[lo] has bit h set when the byte (h << 4 | lo) is a tchar; tchars have high nibbles 2..7.
    // For example entry 0 is 0xE8: '0' (0x30), 'P' (0x50), '`' (0x60) and 'p' (0x70) are tchars, ' ' and '@' are not.
    // Written as constants so the JIT embeds them; the scanner and mask tests prove the result for all 256 byte values.
    public static Vector128<byte> Low
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Vector128.Create((byte)0xE8, 0xFC, 0xF8, 0xFC, 0xFC, 0xFC, 0xFC, 0xFC, 0xF8, 0xF8, 0xF4, 0x54, 0xD0, 0x54, 0xF4, 0x70);
    }

    // High[h] = 1 << h for h in 2..7, 0 otherwise: control bytes and bytes >= 0x80 never match.
    public static Vector128<byte> High
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Vector128.Create((byte)0, 0, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    /// <summary>A 16-entry table lookup per byte (indices 0 to 15).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> Lookup(Vector128<byte> table, Vector128<byte> indices)
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
