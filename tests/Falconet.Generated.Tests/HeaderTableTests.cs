using System;
using System.Linq;
using Falconet.Http;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>HeaderTable, what generated collections are built on: lookups by name and the limits of a bit set.</summary>
public sealed class HeaderTableTests
{
    [Fact]
    public void Names_are_found_in_any_letter_case_and_Content_Length_always_has_its_own_index()
    {
        var table = new HeaderTable(new[] { new KnownHeader("X-Tenant-Id", "blue"), new KnownHeader("Host") });

        table.Count.ShouldBe(2);
        table.IndexOf("x-TENANT-id").ShouldBe(0);
        table.IndexOf("HOST").ShouldBe(1);
        table.IndexOf("content-length").ShouldBe(HeaderTable.ContentLengthIndex);
        table.IndexOf("X-Tenant").ShouldBe(-1);
        table.GetName(0).ShouldBe("X-Tenant-Id");
    }

    [Fact]
    public void A_name_is_found_as_the_tables_own_string_or_as_an_equal_one_made_at_run_time_among_names_of_its_length()
    {
        var table = new HeaderTable(new[] { "Host", "Date", "Vary", "Server" });

        table.IndexOf("Vary").ShouldBe(2);
        table.IndexOf(new string("vARY".AsSpan())).ShouldBe(2);
        table.IndexOf(string.Concat("Da", "te")).ShouldBe(1);
        table.IndexOf("Hose").ShouldBe(-1);
        table.IndexOf("").ShouldBe(-1);
        table.IndexOf("A-Name-Longer-Than-Every-Name-Of-The-Table").ShouldBe(-1);
        Should.Throw<ArgumentNullException>(() => table.IndexOf(null!));
    }

    [Fact]
    public void A_table_refuses_more_headers_than_the_bit_set_holds_and_a_name_given_twice_in_any_case()
    {
        string[] names = Enumerable.Range(0, HeaderTable.MaxKnownHeaders + 1).Select(i => "X-H" + i).ToArray();

        Should.Throw<ArgumentException>(() => new HeaderTable(names));
        Should.Throw<ArgumentException>(() => new HeaderTable(new[] { "X-A", "x-a" }));
        Should.Throw<ArgumentException>(() => new HeaderTable(new[] { "Content-Length" }));
        new HeaderTable(names[..HeaderTable.MaxKnownHeaders]).Count.ShouldBe(HeaderTable.MaxKnownHeaders);
    }

    [Fact]
    public void The_tables_of_an_app_set_list_the_default_headers_first_at_their_bit_indexes()
    {
        string[] request = KnownSchema.AppRequestHeaders.Where(name => name != "Content-Length").ToArray();
        string[] response = KnownSchema.AppResponseHeaders.Where(name => name != "Content-Length").ToArray();

        Enumerable.Range(0, HeaderSet.RequestHeaderTable.Count).Select(HeaderSet.RequestHeaderTable.GetName).ShouldBe(request);
        Enumerable.Range(0, HeaderSet.ResponseHeaderTable.Count).Select(HeaderSet.ResponseHeaderTable.GetName).ShouldBe(response);
        request.Length.ShouldBeGreaterThan(KnownSchema.RequestHeaders.Count - 1);
    }
}
