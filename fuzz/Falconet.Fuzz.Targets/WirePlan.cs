using System;

namespace Falconet.Fuzz;

/// <summary>What happens once to the client's bytes on their way to the server (<see cref="WirePlan"/>).</summary>
public enum WireCorruption
{
    /// <summary>Every byte arrives as written.</summary>
    None,

    /// <summary>One bit of the byte at the offset is flipped.</summary>
    FlipBit,

    /// <summary>The bytes end before the offset, as if the client closed there.</summary>
    Truncate,

    /// <summary>The record that holds the offset arrives twice in a row.</summary>
    DuplicateRecord,

    /// <summary>A few bytes (<see cref="WirePlan.Garbage"/>) arrive before the byte at the offset (after the last byte when the offset is just past it).</summary>
    InsertGarbage,
}

/// <summary>
/// How the client's bytes reach the server: the sizes of the receive pieces they are cut into (cycled; 0 takes all that
/// is there) and at most one corruption at an offset of the client's stream.
/// </summary>
/// <param name="Corruption">What happens at <paramref name="Offset"/>.</param>
/// <param name="Offset">The offset in the client's bytes, as written (beyond their end: nothing happens).</param>
/// <param name="Detail">The bit flipped, or which garbage is inserted.</param>
/// <param name="Pieces">The piece sizes, cycled; empty: each receive takes all that is there.</param>
public sealed record WirePlan(WireCorruption Corruption, int Offset, byte Detail, byte[] Pieces)
{
    // A record header announcing more than follows, an alert, a ClientHello header in the middle of a stream, a zero-length
    // application record, a lone byte, and a header with a length over the most TLS allows.
    private static readonly byte[][] s_garbage =
    [
        [23, 3, 3, 0, 32, 0, 0, 0],
        [21, 3, 3, 0, 2, 2, 40],
        [22, 3, 1, 0xFF, 0xFF],
        [23, 3, 3, 0, 0],
        [0],
        [23, 3, 3, 0x48, 0x01, 1, 2, 3],
        [20, 3, 3, 0, 1, 1],
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
    ];

    /// <summary>The size of receive piece <paramref name="index"/>: a byte's low seven bits, or 1 to 4 when its high bit is set.</summary>
    public int PieceSize(int index)
    {
        if (Pieces.Length == 0)
        {
            return 0;
        }

        byte value = Pieces[index % Pieces.Length];
        return (value & 0x80) != 0 ? 1 + (value & 3) : value & 0x7F;
    }

    /// <summary>The garbage <see cref="WireCorruption.InsertGarbage"/> inserts for <paramref name="detail"/>.</summary>
    public static byte[] Garbage(byte detail) => s_garbage[detail % s_garbage.Length];

    /// <summary>Reads a plan from <paramref name="input"/>: the corruption, a little-endian offset (under 4096), a detail, then the piece sizes.</summary>
    public static WirePlan Read(WireCorruption corruption, ReadOnlySpan<byte> input)
    {
        int offset = input.Length >= 2 ? (input[0] | (input[1] << 8)) & 0xFFF : 0;
        byte detail = input.Length >= 3 ? input[2] : (byte)0;
        return new WirePlan(corruption, offset, detail, input.Length > 3 ? input[3..].ToArray() : []);
    }
}
