using System.Collections.Generic;
using Falconet.Generator.Schema;

namespace Falconet.Generator.Planning;

/// <summary>
/// One unaligned read of <see cref="Size"/> bytes (8, 4, 2 or 1) at <see cref="Offset"/>, compared as
/// <c>(read &amp; Mask) == Value</c>. Values are laid out little-endian: the byte at <see cref="Offset"/> is the
/// lowest byte, so generated code reads with a little-endian load (a plain load on little-endian machines).
/// </summary>
internal sealed record ByteChunk(int Offset, int Size, ulong Mask, ulong Value);

/// <summary>Splits ASCII text into 8/4/2/1-byte chunks and computes the mask and value of each.</summary>
internal static class ByteChunks
{
    /// <summary>Mask byte of an ASCII letter: clears bit 5, the only bit in which upper and lower case differ.</summary>
    public const byte LetterMask = 0xDF;

    /// <summary>The chunk sizes that cover <paramref name="length"/> bytes: as many 8s as fit, then at most one 4, 2 and 1.</summary>
    public static IReadOnlyList<(int Offset, int Size)> Layout(int start, int length)
    {
        var layout = new List<(int, int)>();
        int offset = start;
        int end = start + length;
        foreach (int size in new[] { 8, 4, 2, 1 })
        {
            while (end - offset >= size)
            {
                layout.Add((offset, size));
                offset += size;
                if (size != 8)
                {
                    break;
                }
            }
        }

        return layout;
    }

    /// <summary>
    /// Chunks matching <paramref name="text"/> in any letter case: 0xDF per letter byte, 0xFF for every other byte,
    /// so a masked compare accepts exactly the case variants of the text and nothing else.
    /// </summary>
    public static EquatableArray<ByteChunk> CaseInsensitive(string text)
    {
        var chunks = new List<ByteChunk>();
        foreach ((int offset, int size) in Layout(0, text.Length))
        {
            ulong mask = 0;
            ulong value = 0;
            for (int i = 0; i < size; i++)
            {
                char c = text[offset + i];
                bool letter = HttpToken.IsAsciiLetter(c);
                ulong byteMask = letter ? LetterMask : 0xFFUL;
                ulong byteValue = (letter ? char.ToUpperInvariant(c) : c) & byteMask;
                mask |= byteMask << (8 * i);
                value |= byteValue << (8 * i);
            }

            chunks.Add(new ByteChunk(offset, size, mask, value));
        }

        return EquatableArray.From(chunks);
    }

    /// <summary>Chunks matching <paramref name="text"/> byte for byte, starting at <paramref name="start"/>.</summary>
    public static List<ByteChunk> Exact(string text, int start)
    {
        var chunks = new List<ByteChunk>();
        foreach ((int offset, int size) in Layout(start, text.Length - start))
        {
            chunks.Add(new ByteChunk(offset, size, FullMask(size), Pack(text, offset, size)));
        }

        return chunks;
    }

    /// <summary>The little-endian integer of <paramref name="size"/> bytes of ASCII text at <paramref name="offset"/>.</summary>
    public static ulong Pack(string text, int offset, int size)
    {
        ulong value = 0;
        for (int i = 0; i < size && offset + i < text.Length; i++)
        {
            value |= (ulong)(byte)text[offset + i] << (8 * i);
        }

        return value;
    }

    /// <summary>A mask with the low <paramref name="bytes"/> bytes set.</summary>
    public static ulong FullMask(int bytes) => bytes >= 8 ? ulong.MaxValue : (1UL << (8 * bytes)) - 1;
}
