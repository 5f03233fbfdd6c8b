using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http.Http2.HPack;

namespace Falconet.HPack.Tests.Support;

/// <summary>Writes header blocks representation by representation (RFC 7541 section 6), as a peer's encoder would.</summary>
internal sealed class BlockBuilder
{
    private readonly List<byte> _bytes = new();

    public byte[] ToArray() => _bytes.ToArray();

    /// <summary>An indexed field (6.1).</summary>
    public BlockBuilder Indexed(int index) => Integer(index, 7, 0x80);

    /// <summary>A literal whose name is an index (6.2), with incremental indexing or without.</summary>
    public BlockBuilder Literal(int nameIndex, string value, bool indexing = true, bool huffman = true) =>
        Integer(nameIndex, indexing ? 6 : 4, indexing ? (byte)0x40 : (byte)0x00).String(value, huffman);

    /// <summary>A literal with a literal name (6.2), with incremental indexing or without.</summary>
    public BlockBuilder Literal(string name, string value, bool indexing = true, bool huffman = true)
    {
        _bytes.Add(indexing ? (byte)0x40 : (byte)0x00);
        return String(name, huffman).String(value, huffman);
    }

    /// <summary>A dynamic table size update (6.3).</summary>
    public BlockBuilder SizeUpdate(int size) => Integer(size, 5, 0x20);

    private BlockBuilder String(string text, bool huffman)
    {
        byte[] raw = Encoding.Latin1.GetBytes(text);
        if (!huffman)
        {
            Integer(raw.Length, 7, 0);
            _bytes.AddRange(raw);
            return this;
        }

        var encoded = new byte[HuffmanCodec.GetEncodedLength(raw)];
        HuffmanCodec.Encode(raw, encoded);
        Integer(encoded.Length, 7, 0x80);
        _bytes.AddRange(encoded);
        return this;
    }

    private BlockBuilder Integer(int value, int prefixBits, byte flags)
    {
        Span<byte> bytes = stackalloc byte[8];
        int written = HPackInteger.Encode(value, prefixBits, flags, bytes);
        _bytes.AddRange(bytes[..written].ToArray());
        return this;
    }
}
