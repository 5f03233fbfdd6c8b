using System;
using System.Collections.Generic;
using System.Linq;
using Falconet.HPack.Tests.Support;
using Falconet.Http;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>
/// The response encoder: what it sends for each kind of header, what it indexes and when, size updates, and that every
/// block decodes to the same fields with Falconet's decoder and Kestrel's.
/// </summary>
public sealed class EncoderTests
{
    [Fact]
    public void A_status_with_a_static_entry_is_one_byte_and_another_a_literal_of_the_status_name()
    {
        using var session = new EncoderSession();

        session.Respond(200, new ResponseHeaders(), out List<string> ok).ShouldBe([0x88]);
        ok.ShouldBe([":status: 200"]);
        session.Respond(302, new ResponseHeaders(), out List<string> found).ShouldBe([0x08, 0x03, (byte)'3', (byte)'0', (byte)'2']);
        found.ShouldBe([":status: 302"]);
    }

    [Fact]
    public void A_repeated_value_is_a_literal_then_indexed_on_its_second_sending_then_one_byte()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { Server = "Falconet" };

        byte[] first = session.Respond(200, headers, out List<string> fields);
        fields.ShouldBe([":status: 200", "server: Falconet"]);
        first[1].ShouldBe((byte)0x0F); // literal without indexing, name index 54 (15 + 39)
        first[2].ShouldBe((byte)39);
        session.Encoder.DynamicTableCount.ShouldBe(0);

        byte[] second = session.Respond(200, headers, out _);
        second[1].ShouldBe((byte)(0x40 | 54)); // literal with incremental indexing
        session.Encoder.DynamicTableCount.ShouldBe(1);
        session.Decoder.DynamicTableCount.ShouldBe(1);

        session.Respond(200, headers, out fields).ShouldBe([0x88, 0x80 | 62]);
        fields.ShouldBe([":status: 200", "server: Falconet"]);
    }

    [Fact]
    public void A_value_sent_once_is_never_indexed_so_unique_values_keep_out_of_the_table()
    {
        using var session = new EncoderSession();
        for (int i = 0; i < 20; i++)
        {
            var headers = new ResponseHeaders { ETag = "\"v" + i + "\"", Server = "Falconet" };
            session.Respond(200, headers, out List<string> fields);
            fields.ShouldBe([":status: 200", "server: Falconet", "etag: \"v" + i + "\""]);
        }

        session.Encoder.DynamicTableCount.ShouldBe(1);
    }

    [Fact]
    public void Set_cookie_is_never_indexed_whatever_it_repeats()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { SetCookie = "id=1; Secure; HttpOnly" };

        for (int i = 0; i < 3; i++)
        {
            byte[] block = session.Respond(200, headers, out List<string> fields);
            fields.ShouldBe([":status: 200", "set-cookie: id=1; Secure; HttpOnly"]);
            block[1].ShouldBe((byte)0x1F); // never indexed, name index 55 (15 + 40)
            block[2].ShouldBe((byte)40);
        }

        session.Encoder.DynamicTableCount.ShouldBe(0);
    }

    [Fact]
    public void Content_length_multiple_values_and_headers_outside_the_set_are_literals_with_lower_case_names()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { ContentLength = 1234, Vary = new Microsoft.Extensions.Primitives.StringValues(["Accept-Encoding", "Origin"]) };
        headers["X-Request-ID"] = "abc";
        headers["x-Custom"] = new Microsoft.Extensions.Primitives.StringValues(["1", "2"]);

        session.Respond(404, headers, out List<string> fields);

        fields.ShouldBe([":status: 404", "vary: Accept-Encoding", "vary: Origin", "content-length: 1234", "x-request-id: abc", "x-custom: 1", "x-custom: 2"]);
    }

    [Fact]
    public void A_header_the_static_table_lacks_takes_its_name_from_a_dynamic_entry_once_there_is_one()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { XContentTypeOptions = "nosniff" };
        session.Respond(200, headers, out _);
        session.Respond(200, headers, out _);

        // Another value of the same header: the name is the entry's (index 62), not a literal.
        byte[] block = session.Respond(200, new ResponseHeaders { XContentTypeOptions = "other" }, out List<string> fields);

        fields.ShouldBe([":status: 200", "x-content-type-options: other"]);
        block[1].ShouldBe((byte)0x0F);
        block[2].ShouldBe((byte)(62 - 15));
    }

    [Fact]
    public void Edge_whitespace_is_trimmed_and_a_control_character_is_refused_before_anything_changes()
    {
        using var session = new EncoderSession();
        session.Respond(200, new ResponseHeaders { CacheControl = "  no-store\t" }, out List<string> fields);
        fields.ShouldBe([":status: 200", "cache-control: no-store"]);

        var bad = new ResponseHeaders { Server = "Falconet", Location = "/a\r\nx: y" };
        Should.Throw<InvalidOperationException>(() => session.Encoder.TryEncodeResponseHeaders(200, bad, new byte[1024], out _))
            .Message.ShouldContain("Location");
        var badName = new ResponseHeaders();
        badName["bad name"] = "v";
        Should.Throw<InvalidOperationException>(() => session.Encoder.TryEncodeResponseHeaders(200, badName, new byte[1024], out _));

        // The encoder is still in step with the decoders.
        session.Respond(200, new ResponseHeaders { Server = "Falconet" }, out fields);
        session.Respond(200, new ResponseHeaders { Server = "Falconet" }, out fields);
        session.Respond(200, new ResponseHeaders { Server = "Falconet" }, out fields).Length.ShouldBe(2);
    }

    [Fact]
    public void A_destination_below_the_bound_is_refused_with_nothing_changed()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { Server = "Falconet" };
        session.Respond(200, headers, out _);

        session.Encoder.TryEncodeResponseHeaders(200, headers, new byte[4], out int written).ShouldBeFalse();
        written.ShouldBe(0);

        // Still the second sending: indexed now, not before.
        session.Respond(200, headers, out _)[1].ShouldBe((byte)(0x40 | 54));
    }

    [Fact]
    public void The_peer_setting_shrinks_the_table_at_once_and_the_next_block_says_so()
    {
        using var session = new EncoderSession();
        var headers = new ResponseHeaders { Server = "Falconet" };
        session.Respond(200, headers, out _);
        session.Respond(200, headers, out _);
        session.Encoder.DynamicTableCount.ShouldBe(1);

        session.Encoder.SetPeerMaxTableSize(0);
        session.Encoder.DynamicTableCount.ShouldBe(0);
        byte[] block = session.Respond(200, headers, out List<string> fields);
        block[0].ShouldBe((byte)0x20);
        fields.ShouldBe([":status: 200", "server: Falconet"]);
        session.Decoder.DynamicTableMaxSize.ShouldBe(0);

        // With no table, a repeated value is a literal every time.
        session.Respond(200, headers, out _).Length.ShouldBe(block.Length - 1);
        session.Encoder.DynamicTableCount.ShouldBe(0);
    }

    [Fact]
    public void A_table_that_shrank_and_grew_between_blocks_is_signalled_at_its_smallest_then_its_size()
    {
        using var session = new EncoderSession();
        session.Encoder.SetPeerMaxTableSize(100);
        session.Encoder.SetPeerMaxTableSize(8192);

        byte[] block = session.Respond(200, new ResponseHeaders(), out _);

        // 100 (31 + 69), then 4096 (this encoder's cap: 31 + 4065).
        Hex.Text(block).ShouldBe("3f45" + "3fe11f" + "88");
        session.Decoder.DynamicTableMaxSize.ShouldBe(4096);
    }

    [Fact]
    public void An_encoder_capped_below_4096_says_so_in_its_first_block()
    {
        using var session = new EncoderSession(maxDynamicTableSize: 256);

        Hex.Text(session.Respond(200, new ResponseHeaders(), out _)).ShouldBe("3fe101" + "88");
        session.Decoder.DynamicTableMaxSize.ShouldBe(256);
        Hex.Text(session.Respond(200, new ResponseHeaders(), out _)).ShouldBe("88");
    }

    [Fact]
    public void A_value_larger_than_the_table_empties_it_on_both_ends()
    {
        using var session = new EncoderSession(maxDynamicTableSize: 256);
        var small = new ResponseHeaders { Server = "Falconet" };
        session.Respond(200, small, out _);
        session.Respond(200, small, out _);
        var large = new ResponseHeaders { ContentSecurityPolicy = new string('p', 300) };
        session.Respond(200, large, out _);
        session.Respond(200, large, out _);

        session.Encoder.DynamicTableCount.ShouldBe(0);
        session.Decoder.DynamicTableCount.ShouldBe(0);
        session.Respond(200, small, out List<string> fields);
        fields.ShouldBe([":status: 200", "server: Falconet"]);
    }

    [Fact]
    public void Trailers_are_a_block_without_a_status()
    {
        using var session = new EncoderSession();
        var trailers = new ResponseHeaders();
        trailers["grpc-status"] = "0";
        trailers["Grpc-Message"] = "OK";

        session.Trailers(trailers, out List<string> fields);

        fields.ShouldBe(["grpc-status: 0", "grpc-message: OK"]);
    }

    [Fact]
    public void Without_Huffman_strings_are_raw_and_still_decode()
    {
        using var session = new EncoderSession(huffman: false);

        byte[] block = session.Respond(200, new ResponseHeaders { ContentType = "text/plain" }, out List<string> fields);

        fields.ShouldBe([":status: 200", "content-type: text/plain"]);
        Hex.Text(block).ShouldBe("88" + "0f10" + "0a" + Hex.Text("text/plain"u8));
    }

    [Fact]
    public void A_page_load_of_forty_responses_decodes_the_same_on_both_ends_and_shrinks_to_a_few_bytes_a_response()
    {
        using var session = new EncoderSession();
        string[] types = ["text/html; charset=utf-8", "text/css", "application/javascript", "image/webp"];
        var blocks = new List<byte[]>();
        for (int i = 0; i < 40; i++)
        {
            var headers = new ResponseHeaders
            {
                Server = "Falconet",
                Date = i < 20 ? "Mon, 21 Oct 2013 20:13:21 GMT" : "Mon, 21 Oct 2013 20:13:22 GMT",
                ContentType = types[i % types.Length],
                CacheControl = "public, max-age=31536000, immutable",
                ETag = "\"" + i.ToString("x8", System.Globalization.CultureInfo.InvariantCulture) + "\"",
                ContentLength = 1000 + i,
            };
            blocks.Add(session.Respond(200, headers, out List<string> fields));
            fields.Count.ShouldBe(7);
        }

        // Status, Server, Date, Content-Type and Cache-Control one byte each; the unique ETag and the length as literals.
        blocks[0].Length.ShouldBeGreaterThan(90);
        blocks[^1].AsSpan(0, 5).ToArray().ShouldAllBe(b => b >= 0x80);
        blocks[^1].Length.ShouldBe(5 + (2 + 1 + 8) + (2 + 1 + 3));
    }

    [Fact]
    public void Random_responses_with_table_size_changes_decode_to_what_was_set_on_both_decoders()
    {
        var random = new Random(9113);
        using var session = new EncoderSession();
        string[] pool = ["text/plain", "application/json", "no-cache", "Falconet", "gzip", "Accept-Encoding", "*", "bytes", "\"abc\""];
        HeaderTable table = ResponseHeaders.Table;
        for (int response = 0; response < 300; response++)
        {
            if (random.Next(25) == 0)
            {
                session.Encoder.SetPeerMaxTableSize(random.Next(3) == 0 ? 0 : random.Next(64, 8192));
            }

            var headers = new ResponseHeaders();
            var expected = new List<string>();
            int status = random.Next(4) == 0 ? random.Next(100, 1000) : 200;
            expected.Add(":status: " + status.ToString(System.Globalization.CultureInfo.InvariantCulture));
            var slots = new SortedSet<int>();
            for (int i = random.Next(0, 8); i > 0; i--)
            {
                slots.Add(random.Next(table.Count));
            }

            foreach (int slot in slots)
            {
                string value = random.Next(3) == 0 ? "v" + random.Next(1000) : pool[random.Next(pool.Length)];
                headers[table.GetName(slot)] = value;
                expected.Add(table.GetName(slot).ToLowerInvariant() + ": " + value);
            }

            if (random.Next(2) == 0)
            {
                headers.ContentLength = random.Next(100_000);
                expected.Add("content-length: " + headers.ContentLength.Value.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            if (random.Next(3) == 0)
            {
                headers["X-Unknown-" + random.Next(3)] = pool[random.Next(pool.Length)];
                expected.Add(string.Join(", ", headers.UnknownHeaders!.Keys).ToLowerInvariant() + ": " + headers.UnknownHeaders!.Values.Single().ToString());
            }

            session.Respond(status, headers, out List<string> fields);
            fields.ShouldBe(expected, "response " + response);
        }
    }
}
