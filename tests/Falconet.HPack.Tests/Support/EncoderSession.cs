using System;
using System.Collections.Generic;
using Falconet.Http;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests.Support;

/// <summary>
/// One connection's encoder and, on the other end, two decoders kept in step with it: Falconet's and Kestrel's. Every
/// block encoded is decoded by both, which must deliver the same fields.
/// </summary>
internal sealed class EncoderSession : IDisposable
{
    private readonly DecoderSession _decoder;
    private readonly object _kestrel;
    private readonly List<string> _kestrelFields = new();
    private readonly KestrelRecordingHandler _kestrelHandler;

    public EncoderSession(int maxDynamicTableSize = HPackEncoder.DefaultMaxDynamicTableSize, bool huffman = true, int peerTableSize = 4096)
    {
        Encoder = new HPackEncoder(maxDynamicTableSize, huffman);
        _decoder = new DecoderSession(maxDynamicTableSize: peerTableSize, maxHeaderListSize: 1 << 20, maxStringLength: 1 << 20);
        _kestrel = KestrelHPack.CreateDecoder(peerTableSize, 1 << 20);
        _kestrelHandler = KestrelHPack.CreateHandler<KestrelRecordingHandler>(_kestrelFields);
    }

    public HPackEncoder Encoder { get; }

    public HPackDecoder Decoder => _decoder.Decoder;

    /// <summary>Encodes a response head, decodes it on both ends, and returns the block.</summary>
    public byte[] Respond(int status, ResponseHeaderCollection headers, out List<string> fields)
    {
        var destination = new byte[HPackEncoder.GetMaxEncodedLength(headers)];
        Encoder.TryEncodeResponseHeaders(status, headers, destination, out int written).ShouldBeTrue();
        byte[] block = destination.AsSpan(0, written).ToArray();
        fields = DecodeBoth(block);
        return block;
    }

    /// <summary>Encodes trailers, decodes them on both ends, and returns the block.</summary>
    public byte[] Trailers(ResponseHeaderCollection trailers, out List<string> fields)
    {
        var destination = new byte[HPackEncoder.GetMaxEncodedLength(trailers)];
        Encoder.TryEncodeTrailers(trailers, destination, out int written).ShouldBeTrue();
        byte[] block = destination.AsSpan(0, written).ToArray();
        fields = DecodeBoth(block);
        return block;
    }

    /// <summary>Decodes a block with Falconet's decoder and Kestrel's; both must succeed with the same fields.</summary>
    public List<string> DecodeBoth(byte[] block)
    {
        _decoder.Decode(block).ShouldBe(HPackDecodeResult.Success, "block " + Hex.Text(block));
        _kestrelFields.Clear();
        KestrelHPack.Decode(_kestrel, block, _kestrelHandler);
        var fields = new List<string>(_decoder.Recording.Fields);
        _kestrelFields.ShouldBe(fields, "Kestrel decoded block " + Hex.Text(block) + " differently");
        return fields;
    }

    public void Dispose() => _decoder.Dispose();
}
