{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='order_id',
    partition_by=['months(order_date)', 'bucket(4, customer_id)'],
    table_properties={'write.merge.mode': 'merge-on-read'},
) }}

with payments as (
    select order_id, sum(amount) as amount, count(*) as payment_count
    from {{ ref('stg_payments') }}
    group by order_id
)

select o.order_id, o.customer_id, o.order_date, o.status,
       coalesce(p.amount, 0) as amount, coalesce(p.payment_count, 0) as payment_count
from {{ ref('stg_orders') }} o
left join payments p on p.order_id = o.order_id
{% if is_incremental() %}
where o.order_date >= (select coalesce(max(order_date), date'1900-01-01') - interval 3 days from {{ this }})
{% endif %}
